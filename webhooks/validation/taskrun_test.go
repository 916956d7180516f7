package validation

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestTaskRunPathIsTheBuilders proves TaskRunPath is what controller-runtime's
// builder serves for v1 TaskRun.
func TestTaskRunPathIsTheBuilders(t *testing.T) {
	mgr := newManager(t, scheme.New())
	err := ctrl.NewWebhookManagedBy(mgr, &v1.TaskRun{}).
		WithConverter(conversion.NewTaskRunConverter).WithValidator(TaskRunValidator{}).Complete()
	if err != nil {
		t.Fatalf("building the webhook: %v", err)
	}
	if _, pattern := mgr.GetWebhookServer().WebhookMux().Handler(httptest.NewRequest(http.MethodPost, TaskRunPath, nil)); pattern != TaskRunPath {
		t.Errorf("the builder serves %s under pattern %q", TaskRunPath, pattern)
	}
}

// TestTaskRunPathIsTheMarkers proves TaskRunPath is the path controller-gen
// writes into the ValidatingWebhookConfiguration.
func TestTaskRunPathIsTheMarkers(t *testing.T) {
	src, err := os.ReadFile("taskrun.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// \+kubebuilder:webhook:path=([^,]+),`).FindAllSubmatch(src, -1)
	if len(m) != 1 {
		t.Fatalf("found %d kubebuilder:webhook markers in taskrun.go, want 1", len(m))
	}
	if got := string(m[0][1]); got != TaskRunPath {
		t.Errorf("marker path %q, want %q", got, TaskRunPath)
	}
}

// TestSubjectAccessReviewSpec: the reviews ask about the creator exactly as
// the API server authenticated them, and ask the two permissions in order.
func TestSubjectAccessReviewSpec(t *testing.T) {
	use := serviceAccountUse{namespace: "ns", name: "builder"}
	tests := map[string]struct {
		user authenticationv1.UserInfo
		want []authorizationv1.SubjectAccessReviewSpec
	}{
		"every field of the user": {
			user: authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"builders", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes.example.dev": {"a", "b"}}},
			want: []authorizationv1.SubjectAccessReviewSpec{{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "use", Resource: "serviceaccounts", Name: "builder"},
				User:               "alice", UID: "u-1", Groups: []string{"builders", "system:authenticated"},
				Extra: map[string]authorizationv1.ExtraValue{"scopes.example.dev": {"a", "b"}},
			}, {
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "create", Resource: "pods"},
				User:               "alice", UID: "u-1", Groups: []string{"builders", "system:authenticated"},
				Extra: map[string]authorizationv1.ExtraValue{"scopes.example.dev": {"a", "b"}},
			}},
		},
		"a name alone": {
			user: authenticationv1.UserInfo{Username: "system:serviceaccount:ns:ci"},
			want: []authorizationv1.SubjectAccessReviewSpec{{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "use", Resource: "serviceaccounts", Name: "builder"},
				User:               "system:serviceaccount:ns:ci",
			}, {
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "create", Resource: "pods"},
				User:               "system:serviceaccount:ns:ci",
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []authorizationv1.SubjectAccessReviewSpec
			for _, attrs := range use.permissions() {
				got = append(got, subjectAccessReviewSpec(tc.user, attrs))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reviews (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTaskRunReviews sends the webhook AdmissionReviews as the API server
// would, with a client whose API server cannot be reached: the reviews that
// need no SubjectAccessReview are admitted, and one that does is answered
// with an error that says what could not be checked, never admitted.
func TestTaskRunReviews(t *testing.T) {
	unreachable, err := client.New(newManager(t, scheme.New()).GetConfig(), client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		check   bool
		run     *v1.TaskRun
		wantErr []string // substrings of an error answer's message; none: admitted
	}{
		"no ServiceAccount": {check: true, run: wrappers.TaskRun("ns", "r", "t").Obj()},
		"check off":         {check: false, run: wrappers.TaskRun("ns", "r", "t").ServiceAccount("builder").Obj()},
		"authorizer unreachable": {
			check: true, run: wrappers.TaskRun("ns", "r", "t").ServiceAccount("builder").Obj(),
			wantErr: []string{
				`checking whether TaskRun "r" may use ServiceAccount "builder"`,
				`creating a SubjectAccessReview of "use" on serviceaccounts "builder" in namespace "ns" for user "alice"`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			mgr := newManager(t, scheme.New())
			err := ctrl.NewWebhookManagedBy(mgr, &v1.TaskRun{}).WithConverter(conversion.NewTaskRunConverter).
				WithValidator(TaskRunValidator{Client: unreachable, CheckServiceAccountUse: tc.check}).Complete()
			if err != nil {
				t.Fatalf("building the webhook: %v", err)
			}
			resp := reviewTaskRunCreate(t, mgr.GetWebhookServer().WebhookMux(), tc.run, authenticationv1.UserInfo{Username: "alice"})
			if len(tc.wantErr) == 0 {
				if !resp.Allowed {
					t.Errorf("refused: %+v", resp.Result)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("admitted, want an error answer")
			}
			if resp.Result.Code != http.StatusInternalServerError || resp.Result.Reason != metav1.StatusReasonInternalError {
				t.Errorf("answer code %d reason %q, want %d %q", resp.Result.Code, resp.Result.Reason,
					http.StatusInternalServerError, metav1.StatusReasonInternalError)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(resp.Result.Message, want) {
					t.Errorf("answer %q\ndoes not contain %q", resp.Result.Message, want)
				}
			}
		})
	}
}

// reviewTaskRunCreate posts the AdmissionReview of user creating run to the
// webhook at TaskRunPath and returns its response.
func reviewTaskRunCreate(t *testing.T, mux http.Handler, run *v1.TaskRun, user authenticationv1.UserInfo) *admissionv1.AdmissionResponse {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID:       "1",
		Kind:      metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: "TaskRun"},
		Resource:  metav1.GroupVersionResource{Group: "minitask.dev", Version: "v1", Resource: "taskruns"},
		Name:      run.Name,
		Namespace: run.Namespace,
		Operation: admissionv1.Create,
		UserInfo:  user,
		Object:    runtime.RawExtension{Raw: taskRunJSON(t, run)},
	}
	return postReview(t, mux, TaskRunPath, req)
}

// taskRunJSON is run as the API server sends it: with its apiVersion and kind.
func taskRunJSON(t *testing.T, run *v1.TaskRun) []byte {
	t.Helper()
	run = run.DeepCopy()
	run.SetGroupVersionKind(v1.GroupVersion.WithKind("TaskRun"))
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestRefusal pins the message a creator without either permission reads.
func TestRefusal(t *testing.T) {
	got := serviceAccountUse{namespace: "ns", name: "builder"}.refusal("alice")
	want := `user "alice" may not use ServiceAccount "builder" in namespace "ns": needs "use" on serviceaccounts "builder" or "create" on pods`
	if got != want {
		t.Errorf("refusal\n got %s\nwant %s", got, want)
	}
}

// TestTaskRunValueSizes: each string of a run's values is at most
// MaxValueBytes, checked whether or not the ServiceAccount check is on;
// a value's type is not judged (the run's Task may not exist yet).
func TestTaskRunValueSizes(t *testing.T) {
	long := strings.Repeat("x", MaxValueBytes+1)
	tests := map[string]struct {
		params []v1.Param
		want   string
	}{
		"at the limit": {params: []v1.Param{{Name: "s", Value: *v1.NewStringValue(long[1:])}}},
		"any type": {params: []v1.Param{{Name: "a", Value: *v1.NewArrayValue("x")},
			{Name: "o", Value: *v1.NewObjectValue(map[string]string{"k": "v"})}}},
		"a string": {
			params: []v1.Param{{Name: "s", Value: *v1.NewStringValue(long)}},
			want:   `TaskRun.minitask.dev "r" is invalid: spec.params[0].value: Too long: may not be more than 65536 bytes`,
		},
		"an array's items and an object's keys": {
			params: []v1.Param{{Name: "a", Value: *v1.NewArrayValue(long, "x", long)},
				{Name: "o", Value: *v1.NewObjectValue(map[string]string{"b": long, "a": long, "c": ""})}},
			want: `TaskRun.minitask.dev "r" is invalid: [spec.params[0].value[0]: Too long: may not be more than 65536 bytes, ` +
				`spec.params[0].value[2]: Too long: may not be more than 65536 bytes, ` +
				`spec.params[1].value[a]: Too long: may not be more than 65536 bytes, ` +
				`spec.params[1].value[b]: Too long: may not be more than 65536 bytes]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := TaskRunValidator{}.ValidateCreate(context.Background(), wrappers.TaskRun("ns", "r", "t").Params(tc.params...).Obj())
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateCreate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTaskRunInlineSpec: a run's inline spec.taskSpec is checked as a
// Task's spec is, each error under spec.taskSpec.
func TestTaskRunInlineSpec(t *testing.T) {
	tests := map[string]struct {
		spec *wrappers.TaskWrapper
		want string
	}{
		"a valid spec": {spec: wrappers.Task("ns", "t").Param("x").Step("a", "alpine", "echo $(params.x)")},
		"an undeclared param": {
			spec: wrappers.Task("ns", "t").Step("a", "alpine", "echo $(params.nope)"),
			want: `TaskRun.minitask.dev "r" is invalid: spec.taskSpec.steps[0].script: Invalid value: "$(params.nope)": step "a" uses undeclared param "nope"`,
		},
		"an object param without properties": {
			spec: wrappers.Task("ns", "t").Params(v1.ParamSpec{Name: "o", Type: v1.ParamTypeObject}).Step("a", "alpine", "true"),
			want: `spec.taskSpec.params[0].properties: Required value`,
		},
		"results, the last step no script": {
			spec: wrappers.Task("ns", "t").Results("digest").Steps(v1.Step{Name: "a", Image: "alpine", Command: []string{"true"}}),
			want: `spec.taskSpec.steps[0]: Invalid value: "a": the Task declares results`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "r", "").Inline(tc.spec.Obj().Spec).Obj()
			_, err := TaskRunValidator{}.ValidateCreate(context.Background(), run)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("ValidateCreate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
