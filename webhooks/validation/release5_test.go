package validation

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestRelease5Paths sends release 5's paths the v1beta1 reviews release 5's
// webhook configuration asks for, and checks that each is judged by the
// object's v1 form, its conversion annotation restored, as release 6's
// paths judge v1.
func TestRelease5Paths(t *testing.T) {
	unreachable, err := client.New(newManager(t, scheme.New()).GetConfig(), client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	mgr := newManager(t, scheme.New())
	RegisterRelease5Paths(mgr, TaskRunValidator{Client: unreachable, CheckServiceAccountUse: true})
	mux := mgr.GetWebhookServer().WebhookMux()

	typed := func(name, script string) *v1beta1.Task {
		return &v1beta1.Task{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
				Annotations: map[string]string{conversion.AnnotationConversionData: `{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`}},
			Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptr.To(`["a.go"]`)}},
				Steps: []v1beta1.Step{{Name: "lint", Image: "alpine:3", Script: script}}},
		}
	}
	tasks := map[string]struct {
		op      admissionv1.Operation
		old     *v1beta1.Task
		task    *v1beta1.Task
		wantMsg string // "": allowed
	}{
		"create valid": {op: admissionv1.Create, task: typed("ok", "true")},
		"create of an array used as a string": {
			op: admissionv1.Create, task: typed("bad", "echo $(params.files)"),
			wantMsg: `Task.minitask.dev "bad" is invalid: spec.steps[0].script: Invalid value: "$(params.files)": step "lint": param "files" is an array, which cannot be used as a string; write $(params.files[*]) as a whole item of command or args, for one item per element`,
		},
		"update that leaves an invalid spec as it was": {
			op: admissionv1.Update, old: typed("bad", "echo $(params.files)"), task: typed("bad", "echo $(params.files)"),
		},
		"update to an invalid spec": {
			op: admissionv1.Update, old: typed("bad", "true"), task: typed("bad", "echo $(params.files)"),
			wantMsg: `spec.steps[0].script: Invalid value: "$(params.files)"`,
		},
	}
	for name, tc := range tasks {
		t.Run("Task "+name, func(t *testing.T) {
			req := betaRequest(t, tc.op, "tasks", "Task", tc.task)
			if tc.old != nil {
				req.OldObject = runtime.RawExtension{Raw: betaJSON(t, "Task", tc.old)}
			}
			checkReview(t, postReview(t, mux, Release5Path, req), tc.wantMsg)
		})
	}

	run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r",
		Annotations: map[string]string{conversion.AnnotationConversionData: `{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`}},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Params: []v1beta1.Param{{Name: "files", Value: `["` + strings.Repeat("x", MaxValueBytes+1) + `"]`}}}}
	t.Run("TaskRun with a long item", func(t *testing.T) {
		req := betaRequest(t, admissionv1.Create, "taskruns", "TaskRun", run)
		checkReview(t, postReview(t, mux, Release5TaskRunPath, req),
			`TaskRun.minitask.dev "r" is invalid: spec.params[0].value[0]: Too long: may not be more than 65536 bytes`)
	})
	t.Run("TaskRun naming a ServiceAccount", func(t *testing.T) {
		withSA := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, ServiceAccountName: "builder"}}
		req := betaRequest(t, admissionv1.Create, "taskruns", "TaskRun", withSA)
		// The authorizer cannot be reached: the answer says what could not
		// be checked, which proves the check ran.
		checkReview(t, postReview(t, mux, Release5TaskRunPath, req), `may use ServiceAccount "builder"`)
	})
}

// betaRequest is the review of a v1beta1 object of kind, as release 5's
// webhook configuration has the API server send it.
func betaRequest(t *testing.T, op admissionv1.Operation, resource, kind string, obj client.Object) *admissionv1.AdmissionRequest {
	t.Helper()
	return &admissionv1.AdmissionRequest{
		UID:       "1",
		Kind:      metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1beta1", Kind: kind},
		Resource:  metav1.GroupVersionResource{Group: "minitask.dev", Version: "v1beta1", Resource: resource},
		Name:      obj.GetName(),
		Namespace: obj.GetNamespace(),
		Operation: op,
		UserInfo:  authenticationv1.UserInfo{Username: "alice"},
		Object:    runtime.RawExtension{Raw: betaJSON(t, kind, obj)},
	}
}

// betaJSON is obj as the API server sends it, with its apiVersion and kind.
func betaJSON(t *testing.T, kind string, obj client.Object) []byte {
	t.Helper()
	obj = obj.DeepCopyObject().(client.Object)
	obj.GetObjectKind().SetGroupVersionKind(v1beta1.GroupVersion.WithKind(kind))
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// checkReview fails t unless resp allows, when wantMsg is "", or denies
// with a message containing wantMsg.
func checkReview(t *testing.T, resp *admissionv1.AdmissionResponse, wantMsg string) {
	t.Helper()
	if wantMsg == "" {
		if !resp.Allowed {
			t.Errorf("denied: %+v", resp.Result)
		}
		return
	}
	if resp.Allowed {
		t.Fatalf("allowed, want denied with %q", wantMsg)
	}
	if !strings.Contains(resp.Result.Message, wantMsg) {
		t.Errorf("message %s", cmp.Diff(wantMsg, resp.Result.Message))
	}
	if resp.Result.Code == http.StatusOK {
		t.Errorf("denied with code 200")
	}
}
