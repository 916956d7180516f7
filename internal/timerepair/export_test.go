package timerepair

import (
	"testing"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// BenchRun is benchRun, for the benchmarks of package timerepair_test.
func BenchRun(b *testing.B, i int) *v1.TaskRun { return benchRun(b, i) }
