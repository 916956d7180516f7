package runpod

import (
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/purity"
)

// TestPure keeps the package what its doc says: no client, no clock, and no
// import of the controller that uses it. The controller reads the cluster
// and the time, and hands them in.
func TestPure(t *testing.T) { purity.Check(t, ".") }
