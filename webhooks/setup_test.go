package webhooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/webhooks/conditiontime"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// setUpManager returns a manager that SetupWithManager has set up. It is
// never started, so it needs no API server behind its config.
func setUpManager(t *testing.T) ctrl.Manager {
	t.Helper()
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
	return mgr
}

func TestSetupWithManagerServesEveryWebhook(t *testing.T) {
	mgr := setUpManager(t)
	for _, kind := range []string{"Task", "TaskRun"} {
		if _, ok := mgr.GetConverterRegistry().GetConverter(schema.GroupKind{Group: "minitask.dev", Kind: kind}); !ok {
			t.Errorf("no converter registered for %s", kind)
		}
	}
	mux := mgr.GetWebhookServer().WebhookMux()
	for _, path := range []string{"/convert", validation.Path, validation.TaskRunPath,
		validation.Release5Path, validation.Release5TaskRunPath, conditiontime.Path} {
		if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil)); pattern != path {
			t.Errorf("%s is not served (matched pattern %q)", path, pattern)
		}
	}
}

// TestConvertIsOurHandler: /convert is conversion.NewHandler, not the one
// controller-runtime's builder would register, so a stored object no typed
// decode takes is passed through instead of failing the review.
func TestConvertIsOurHandler(t *testing.T) {
	mgr := setUpManager(t)
	body := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1",` +
		`"desiredAPIVersion":"minitask.dev/v1alpha1","objects":[{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun",` +
		`"metadata":{"name":"r","namespace":"ns"},"spec":{"taskRef":{"name":"t"}},"status":{"startTime":"2024-05-01t10:00:00z"}}]}}`
	recorder := httptest.NewRecorder()
	mgr.GetWebhookServer().WebhookMux().ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, "/convert", strings.NewReader(body)))
	if recorder.Code != http.StatusOK || !strings.Contains(recorder.Body.String(), `"status":"Success"`) {
		t.Errorf("/convert answered HTTP %d: %s; want the malformed TaskRun passed through", recorder.Code, recorder.Body)
	}
}
