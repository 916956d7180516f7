package rundecision

import (
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/purity"
)

func TestPure(t *testing.T) { purity.Check(t, ".") }
