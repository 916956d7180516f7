package conversion

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

func TestMain(m *testing.M) {
	// The handler tests feed malformed reviews on purpose; controller-runtime
	// would log each one, and warn that no logger was ever set.
	log.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
