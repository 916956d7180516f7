package webhooks

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/minitask-dev/minitask/internal/apicompat"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// setUpManager returns a manager that SetupWithManager has set up. It is
// never started, so it needs no API server behind its config.
func setUpManager(t *testing.T) ctrl.Manager {
	t.Helper()
	return setUpManagerWith(t, DefaultOptions())
}

// setUpManagerWith returns a manager that SetupWithOptions has set up with
// o, whose webhook server is a recordingServer.
func setUpManagerWith(t *testing.T, o Options) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          &recordingServer{Server: webhook.NewServer(webhook.Options{})},
	})
	if err != nil {
		t.Fatalf("creating a manager: %v", err)
	}
	if err := SetupWithOptions(mgr, o); err != nil {
		t.Fatalf("SetupWithOptions: %v", err)
	}
	return mgr
}

// recordingServer is a webhook server that records the paths registered
// with it, which its ServeMux cannot list.
type recordingServer struct {
	webhook.Server
	paths []string
}

func (s *recordingServer) Register(path string, hook http.Handler) {
	s.paths = append(s.paths, path)
	s.Server.Register(path, hook)
}

// TestSetupWithManagerServesEveryWebhook: the manager serves each of
// ServedPaths and registers no other path, with either conversion handler,
// so that the list frozen with a release (hack/webhook-paths) is what its
// replicas answer.
func TestSetupWithManagerServesEveryWebhook(t *testing.T) {
	for _, handler := range []string{conversion.HandlerMinitask, conversion.HandlerControllerRuntime} {
		t.Run(handler, func(t *testing.T) {
			o := DefaultOptions()
			o.ConversionHandler = handler
			mgr := setUpManagerWith(t, o)
			for _, kind := range []string{"Task", "TaskRun"} {
				if _, ok := mgr.GetConverterRegistry().GetConverter(schema.GroupKind{Group: "minitask.dev", Kind: kind}); !ok {
					t.Errorf("no converter registered for %s", kind)
				}
			}
			mux := mgr.GetWebhookServer().WebhookMux()
			for _, path := range ServedPaths() {
				if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil)); pattern != path {
					t.Errorf("%s is not served (matched pattern %q)", path, pattern)
				}
			}
			registered := slices.Sorted(slices.Values(mgr.GetWebhookServer().(*recordingServer).paths))
			if diff := cmp.Diff(ServedPaths(), registered); diff != "" {
				t.Errorf("registered paths (+) against ServedPaths (-):\n%s", diff)
			}
		})
	}
}

// TestConfigurationNamesConfiguredPaths: the paths the installed webhook
// configuration and the CRDs' conversion name are ConfiguredPaths, so
// that ServedPaths has each of them.
func TestConfigurationNamesConfiguredPaths(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	named, err := apicompat.LoadWebhookPaths(filepath.Join(root, "config", "webhook", "manifests.yaml"),
		filepath.Join(root, "config", "crd", "patches"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	conversions := 0
	for _, w := range named {
		paths = append(paths, w.Path)
		if w.Path == conversion.Path {
			conversions++
		}
	}
	if conversions != 2 {
		t.Errorf("%d CRDs convert at %s, want both", conversions, conversion.Path)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(ConfiguredPaths())), slices.Compact(slices.Sorted(slices.Values(paths)))); diff != "" {
		t.Errorf("paths the configuration names (+) against ConfiguredPaths (-):\n%s", diff)
	}
	for _, path := range paths {
		if !slices.Contains(ServedPaths(), path) {
			t.Errorf("%s is named by the configuration but not in ServedPaths", path)
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
