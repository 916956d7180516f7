package stashguard

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/config/crd"
)

// TestPinnedSpec: the controller's status write pins a run's spec once;
// no write of any version forges, changes or removes it after, and an
// inline run's pin is its own spec.
func TestPinnedSpec(t *testing.T) {
	ctx := context.Background()
	runRules, err := loadHubRules(crd.TaskRunsFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	runs := newTaskRunGuard(runRules)

	spec := func(script string) *v1.TaskSpec {
		return &v1.TaskSpec{Steps: []v1.Step{{Name: "a", Image: "alpine", Script: script}}}
	}
	run := func(inline, pinned *v1.TaskSpec) *v1.TaskRun {
		r := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
		if inline != nil {
			r.Spec.TaskSpec = inline
		} else {
			r.Spec.TaskRef.Name = "t"
		}
		r.Status.TaskSpec = pinned
		return r
	}
	plain, pinned, repinned := run(nil, nil), run(nil, spec("true")), run(nil, spec("forged"))
	inline, inlinePinned, inlineForged := run(spec("true"), nil), run(spec("true"), spec("true")), run(spec("true"), spec("forged"))

	tests := map[string]struct {
		subresource string
		obj, old    *v1.TaskRun
		version     string
		want        string // in the refusal; "" allowed
	}{
		"v1: the controller pins a Task's spec":          {version: "v1", subresource: "status", obj: pinned, old: plain},
		"v1: the controller pins an inline spec":         {version: "v1", subresource: "status", obj: inlinePinned, old: inline},
		"v1: a status write keeping the pin":             {version: "v1", subresource: "status", obj: pinned, old: pinned},
		"v1: a status write changing the pin":            {version: "v1", subresource: "status", obj: repinned, old: pinned, want: "cannot be changed or removed"},
		"v1: a status write removing the pin":            {version: "v1", subresource: "status", obj: plain, old: pinned, want: "cannot be changed or removed"},
		"v1: an inline run pinned to another spec":       {version: "v1", subresource: "status", obj: inlineForged, old: inline, want: "status.taskSpec must be spec.taskSpec"},
		"v1: a label on a pinned run":                    {version: "v1", obj: pinned, old: pinned},
		"v1beta1: a label on a pinned run":               {version: "v1beta1", obj: pinned, old: pinned},
		"v1beta1: a pin forged in the annotation":        {version: "v1beta1", obj: pinned, old: plain, want: "only the controller sets it"},
		"v1beta1: a pin changed in the annotation":       {version: "v1beta1", obj: repinned, old: pinned, want: "cannot be changed or removed"},
		"v1beta1: a create with a pin":                   {version: "v1beta1", obj: pinned, want: "only the controller sets it"},
		"v1alpha1: a label on a pinned run":              {version: "v1alpha1", obj: pinned, old: pinned},
		"v1alpha1: a pin forged in the annotation":       {version: "v1alpha1", obj: pinned, old: plain, want: "only the controller sets it"},
		"v1alpha1: a status write changing the pin":      {version: "v1alpha1", subresource: "status", obj: repinned, old: pinned, want: "cannot be changed or removed"},
		"v1alpha1: a create of an inline run with a pin": {version: "v1alpha1", obj: inlinePinned, want: "only the controller sets it"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			op := admissionv1.Create
			if tc.old != nil {
				op = admissionv1.Update
			}
			kind := metav1.GroupVersionKind{Group: "minitask.dev", Version: tc.version, Kind: "TaskRun"}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "1", Kind: kind, RequestKind: &kind, Name: "r", Namespace: "ns", Operation: op, SubResource: tc.subresource,
				Object: runtime.RawExtension{Raw: inVersion(t, ctx, tc.obj, tc.version)},
			}}
			if tc.old != nil {
				req.OldObject = runtime.RawExtension{Raw: inVersion(t, ctx, tc.old, tc.version)}
			}
			resp := runs.Handle(ctx, req)
			if tc.want == "" {
				if !resp.Allowed {
					t.Fatalf("refused: %v", resp.Result)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("allowed; want a refusal saying %q", tc.want)
			}
			if msg := resp.Result.Message; !strings.Contains(msg, "status.taskSpec") || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not name status.taskSpec and say %q", msg, tc.want)
			}
		})
	}
}

// TestRawPin: the pin's bytes are found only as status.taskSpec, an
// object, in JSON that reads; anything else sends the guard to decode it
// all.
func TestRawPin(t *testing.T) {
	pin := `{"steps":[{"name":"a","image":"alpine","script":"echo \"status\""}]}`
	tests := map[string]struct {
		raw, want string
	}{
		"pinned":                     {raw: `{"metadata":{"name":"r"},"spec":{"taskRef":{"name":"t"}},"status":{"podName":"p","taskSpec":` + pin + `,"steps":[]}}`, want: pin},
		"not pinned":                 {raw: `{"metadata":{"name":"r"},"status":{"podName":"p"}}`},
		"no status":                  {raw: `{"metadata":{"name":"r"},"spec":{"taskSpec":` + pin + `}}`},
		"an inline spec, not pinned": {raw: `{"spec":{"taskSpec":` + pin + `},"status":{"podName":"p"}}`},
		"a null pin":                 {raw: `{"status":{"taskSpec":null}}`},
		"a pin that is no object":    {raw: `{"status":{"taskSpec":"forged"}}`},
		"status named in a string":   {raw: `{"metadata":{"annotations":{"status":"{\"taskSpec\":{}}"}}}`},
		"status twice":               {raw: `{"status":{"taskSpec":` + pin + `},"status":{"taskSpec":{}}}`},
		"taskSpec twice":             {raw: `{"status":{"taskSpec":` + pin + `,"taskSpec":{}}}`},
		"cut short":                  {raw: `{"status":{"taskSpec":` + pin[:20]},
		"not JSON":                   {raw: `status: {taskSpec: {}}`},
		"no object":                  {raw: `[{"status":{"taskSpec":{}}}]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := string(rawPin([]byte(tc.raw))); got != tc.want {
				t.Errorf("rawPin(%s) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}
