package nodefault

import (
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/purity"
)

// TestPure keeps the package what its doc says: no client and no clock. The
// controller reads the Node and the time, and hands them in.
func TestPure(t *testing.T) { purity.Check(t, ".") }
