package webhooks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

func TestSetupWithManagerServesEveryWebhook(t *testing.T) {
	// The manager is never started, so it needs no API server behind its config.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatalf("creating a manager: %v", err)
	}
	if err := SetupWithManager(mgr); err != nil {
		t.Fatalf("SetupWithManager: %v", err)
	}
	for _, kind := range []string{"Task", "TaskRun"} {
		if _, ok := mgr.GetConverterRegistry().GetConverter(schema.GroupKind{Group: "minitask.dev", Kind: kind}); !ok {
			t.Errorf("no converter registered for %s", kind)
		}
	}
	mux := mgr.GetWebhookServer().WebhookMux()
	for _, path := range []string{"/convert", validation.Path} {
		if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil)); pattern != path {
			t.Errorf("%s is not served (matched pattern %q)", path, pattern)
		}
	}
}
