package conversion

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// SetupWebhooks sets up every minitask webhook on the manager of the API
// server that some tests start (testenv.ForTest): webhooks.SetupWithManager,
// so that the API server calls what ships. The package webhooks imports this
// one, so this package's own tests cannot; webhooks_test.go, in the external
// test package, sets it.
var SetupWebhooks func(ctrl.Manager) error

func TestMain(m *testing.M) {
	// The handler tests feed malformed reviews on purpose; controller-runtime
	// would log each one, and warn that no logger was ever set.
	log.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
