package validation

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// newManager returns a manager that is never started: enough to register
// webhooks and serve them through its mux.
func newManager(t *testing.T, s *runtime.Scheme) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	return mgr
}

// TestPathIsTheBuilders proves Path is what controller-runtime's builder would
// serve for v1 Task. The builder is given a scheme with v1 alone, where it
// does not ask for conversion.
func TestPathIsTheBuilders(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mgr := newManager(t, s)
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.Task{}).WithValidator(TaskValidator{}).Complete(); err != nil {
		t.Fatalf("building the webhook: %v", err)
	}
	if _, pattern := mgr.GetWebhookServer().WebhookMux().Handler(httptest.NewRequest(http.MethodPost, Path, nil)); pattern != Path {
		t.Errorf("the builder serves %s under pattern %q, want %q", Path, pattern, Path)
	}
}

// TestPathIsTheMarkers proves Path is the path controller-gen writes into the
// ValidatingWebhookConfiguration, so the API server calls what we serve.
func TestPathIsTheMarkers(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// \+kubebuilder:webhook:path=([^,]+),`).FindAllSubmatch(src, -1)
	if len(m) != 1 {
		t.Fatalf("found %d kubebuilder:webhook markers in doc.go, want 1", len(m))
	}
	if got := string(m[0][1]); got != Path {
		t.Errorf("marker path %q, want %q", got, Path)
	}
}

// TestAdmissionReviews registers the validator as webhooks.SetupWithManager
// does (one builder with Task conversion, the scheme the manager ships with)
// and sends it AdmissionReviews as the API server would.
func TestAdmissionReviews(t *testing.T) {
	mgr := newManager(t, scheme.New())
	err := ctrl.NewWebhookManagedBy(mgr, &v1.Task{}).
		WithConverter(conversion.NewTaskConverter).WithValidator(TaskValidator{}).Complete()
	if err != nil {
		t.Fatalf("building the webhook: %v", err)
	}
	mux := mgr.GetWebhookServer().WebhookMux()

	tests := map[string]struct {
		op   admissionv1.Operation
		task *v1.Task
		want *metav1.Status // nil: allowed
	}{
		"create valid": {
			op:   admissionv1.Create,
			task: wrappers.Task("default", "ok").ParamDefault("greeting", "hi").Step("say", "alpine:3", "echo $(params.greeting)").Obj(),
		},
		"create undeclared": {
			op:   admissionv1.Create,
			task: wrappers.Task("default", "bad").Step("say", "alpine:3", "echo $(params.greeting)").Obj(),
			want: &metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
				Message: `Task.minitask.dev "bad" is invalid: spec.steps[0].script: Invalid value: "$(params.greeting)": step "say" uses undeclared param "greeting"`,
			},
		},
		"update malformed": {
			op:   admissionv1.Update,
			task: wrappers.Task("default", "bad").Step("say", "alpine:3", "echo $(params.").Obj(),
			want: &metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
				Message: `Task.minitask.dev "bad" is invalid: spec.steps[0].script: Invalid value: step "say": malformed param reference "$(params.": missing ")"`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := review(t, mux, tc.op, tc.task)
			if tc.want == nil {
				if !resp.Allowed {
					t.Errorf("denied: %+v", resp.Result)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("allowed, want denied with %q", tc.want.Message)
			}
			got := resp.Result.DeepCopy()
			got.Details = nil // TestInvalidStatusNamesFields covers the causes.
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// review posts an AdmissionReview for task to the webhook at Path and returns
// its response. An update's old object is an empty Task, so the spec changes.
func review(t *testing.T, mux http.Handler, op admissionv1.Operation, task *v1.Task) *admissionv1.AdmissionResponse {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID:       "1",
		Kind:      metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: "Task"},
		Resource:  metav1.GroupVersionResource{Group: "minitask.dev", Version: "v1", Resource: "tasks"},
		Name:      task.Name,
		Namespace: task.Namespace,
		Operation: op,
		Object:    runtime.RawExtension{Raw: taskJSON(t, task)},
	}
	if op == admissionv1.Update {
		req.OldObject = runtime.RawExtension{Raw: taskJSON(t, wrappers.Task("default", task.Name).Obj())}
	}
	return postReview(t, mux, Path, req)
}

// postReview sends req to the webhook at path on mux, as the API server
// does, and returns the response that answers it.
func postReview(t *testing.T, mux http.Handler, path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	httpReq := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	httpReq.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httpReq)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d: %s", path, rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("decoding the AdmissionReview response: %v", err)
	}
	if out.Response == nil || out.Response.UID != req.UID {
		t.Fatalf("response %+v does not answer request %s", out.Response, req.UID)
	}
	return out.Response
}

// taskJSON is task as the API server sends it in a review: with its
// apiVersion and kind.
func taskJSON(t *testing.T, task *v1.Task) []byte {
	t.Helper()
	task = task.DeepCopy()
	task.SetGroupVersionKind(v1.GroupVersion.WithKind("Task"))
	raw, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
