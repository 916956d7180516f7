package stashguard

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/config/crd"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

func newRunGuard(t *testing.T) admission.Handler {
	t.Helper()
	rules, err := loadHubRules(crd.TaskRunsFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	return newTaskRunGuard(rules)
}

// request is an AdmissionRequest as the API server sends it with
// matchPolicy Exact: the objects in the version written.
func request(t *testing.T, op admissionv1.Operation, subresource string, obj, old runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: data}
	}
	version := "v1beta1"
	if _, ok := obj.(*v1alpha1.TaskRun); ok {
		version = "v1alpha1"
	}
	kind := metav1.GroupVersionKind{Group: "minitask.dev", Version: version, Kind: "TaskRun"}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Kind: kind, RequestKind: &kind, Name: "r", Namespace: "ns", Operation: op, SubResource: subresource,
		Object: raw(obj), OldObject: raw(old),
	}}
}

// v1Request is an AdmissionRequest of a v1 TaskRun, its objects' JSON as
// given (old empty: none).
func v1Request(op admissionv1.Operation, subresource, old, obj string) admission.Request {
	kind := metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: "TaskRun"}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Kind: kind, RequestKind: &kind, Name: "r", Namespace: "ns", Operation: op, SubResource: subresource,
		Object: runtime.RawExtension{Raw: []byte(obj)},
	}}
	if old != "" {
		req.OldObject = runtime.RawExtension{Raw: []byte(old)}
	}
	return req
}

func spokeRun(annotations map[string]string) *v1alpha1.TaskRun {
	return &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Annotations: annotations},
		Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
}

func hubRun(params ...v1beta1.Param) *v1beta1.TaskRun {
	return &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Params: params}}
}

// nearlyFull returns annotations that leave room bytes below the API
// server's limit.
func nearlyFull(room int) map[string]string {
	const key = "example.com/notes"
	return map[string]string{key: strings.Repeat("n", conversion.MaxAnnotationsBytes-len(key)-room)}
}

func TestGuard(t *testing.T) {
	stash := func(s string) map[string]string { return map[string]string{conversion.AnnotationConversionData: s} }
	omitted := map[string]string{conversion.AnnotationConversionDataOmitted: "true"}
	big := v1beta1.Param{Name: "html", Value: strings.Repeat("<", 50<<10)}
	bigger := v1beta1.Param{Name: "more", Value: "<"}
	g := newRunGuard(t)

	tests := map[string]struct {
		req  admission.Request
		want []string // what the denial says; none: allowed
	}{
		"v1alpha1 create": {req: request(t, admissionv1.Create, "", spokeRun(nil), nil)},
		"v1alpha1 create with a valid stash": {
			req: request(t, admissionv1.Create, "", spokeRun(stash(`{"v1beta1":{"spec":{"timeout":"10m","status":"Cancelled"}}}`)), nil),
		},
		"v1alpha1 create with a forged stash": {
			req:  request(t, admissionv1.Create, "", spokeRun(stash(`{"v1beta1":{"spec":{"params":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}}}`)), nil),
			want: []string{`spec.params[1]: Duplicate value: {"name":"a"}`},
		},
		"v1alpha1 update that changes the stashed timeout": {
			req: request(t, admissionv1.Update, "", spokeRun(stash(`{"v1beta1":{"spec":{"timeout":"2h"}}}`)),
				spokeRun(stash(`{"v1beta1":{"spec":{"timeout":"1h"}}}`))),
			want: []string{"spec.timeout: Invalid value: timeout is immutable"},
		},
		"v1alpha1 update that rewrites the timeout's text": {
			req: request(t, admissionv1.Update, "", spokeRun(stash(`{"v1beta1":{"spec":{"timeout":"60m"}}}`)),
				spokeRun(stash(`{"v1beta1":{"spec":{"timeout":"1h"}}}`))),
		},
		"v1alpha1 update of an object whose stash was omitted": {
			req:  request(t, admissionv1.Update, "", spokeRun(nil), spokeRun(omitted)),
			want: []string{`metadata.annotations[minitask.dev/conversion-data-omitted]: Forbidden`},
		},
		// Annotations of its own that fill the limit but for a few bytes:
		// a stash omitted could not be marked.
		"v1alpha1 update of an object with no room for the marker": {
			req:  request(t, admissionv1.Update, "", spokeRun(nearlyFull(30)), spokeRun(nearlyFull(30))),
			want: []string{`metadata.annotations[minitask.dev/conversion-data-omitted]: Forbidden`},
		},
		"v1alpha1 update of an object with room for the marker": {
			req: request(t, admissionv1.Update, "", spokeRun(nearlyFull(len(conversion.AnnotationConversionDataOmitted)+len("true"))),
				spokeRun(nearlyFull(len(conversion.AnnotationConversionDataOmitted)+len("true")))),
		},
		"v1alpha1 status update of an object whose stash was omitted": {
			req:  request(t, admissionv1.Update, "status", spokeRun(omitted), spokeRun(omitted)),
			want: []string{"write it through minitask.dev/v1beta1"},
		},
		"v1alpha1 status update": {
			req: request(t, admissionv1.Update, "status", &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
				Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}, Status: v1alpha1.TaskRunStatus{PodName: "p"}}, spokeRun(nil)),
		},
		"v1beta1 create under the limit": {req: request(t, admissionv1.Create, "", hubRun(v1beta1.Param{Name: "p", Value: "v"}), nil)},
		"v1beta1 create over the limit": {
			req:  request(t, admissionv1.Create, "", hubRun(big), nil),
			want: []string{"metadata.annotations: Invalid value: read through minitask.dev/v1alpha1, this TaskRun needs 307"},
		},
		"v1beta1 update that stays over the limit": {req: request(t, admissionv1.Update, "", hubRun(big, bigger), hubRun(big))},
		"v1beta1 update that goes over the limit": {
			req:  request(t, admissionv1.Update, "", hubRun(big), hubRun()),
			want: []string{"more than the API server's limit of 262144"},
		},
		"v1beta1 object no typed decode takes": {
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
				Kind:   metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1beta1", Kind: "TaskRun"},
				Object: runtime.RawExtension{Raw: []byte(`{"status":{"startTime":"2024-05-01t10:00:00z"}}`)}}},
		},
		"v1alpha1 object no typed decode takes": {
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
				Kind:   metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1alpha1", Kind: "TaskRun"},
				Object: runtime.RawExtension{Raw: []byte(`{"status":{"startTime":"2024-05-01t10:00:00z"}}`)}}},
			want: []string{"this TaskRun cannot be converted to minitask.dev/v1beta1", "write it through minitask.dev/v1beta1"},
		},
		// Even a write that keeps it as it is (release 6's storage
		// migration, which writes every object through v1): conversion
		// passes such an object through as stored, and what v1 names
		// otherwise (a v1beta1 spec.timeout) would be pruned.
		"v1 update that keeps an object no typed decode takes": {
			req: v1Request(admissionv1.Update, "", `{"spec":{"taskRef":{"name":"t"},"timeout":"1h"},"status":{"startTime":"2024-05-01t10:00:00z"}}`,
				`{"spec":{"taskRef":{"name":"t"},"timeout":"1h"},"status":{"startTime":"2024-05-01t10:00:00z"}}`),
			want: []string{"this TaskRun cannot be converted to minitask.dev/v1beta1", "write it through minitask.dev/v1beta1"},
		},
		"delete": {req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Delete}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := g.Handle(t.Context(), tc.req)
			if len(tc.want) == 0 {
				if !resp.Allowed {
					t.Fatalf("denied: %+v", resp.Result)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("allowed; want denied saying %q", tc.want)
			}
			if resp.Result.Code != http.StatusUnprocessableEntity || resp.Result.Reason != metav1.StatusReasonInvalid {
				t.Errorf("denied with %d %s, want 422 Invalid", resp.Result.Code, resp.Result.Reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("message %q does not say %q", resp.Result.Message, w)
				}
			}
		})
	}
}

func TestGuardRefusesAnUnknownVersion(t *testing.T) {
	req := request(t, admissionv1.Create, "", hubRun(), nil)
	req.Kind.Version = "v2"
	if resp := newRunGuard(t).Handle(t.Context(), req); resp.Allowed || resp.Result.Code != http.StatusBadRequest {
		t.Errorf("a v2 request got %+v, want HTTP 400", resp)
	}
}

// TestHubRulesAreTheCRDs: the rules load from the embedded CRDs, and judge
// as the CRD says (here, the limits and the timeout's CEL rule).
func TestHubRulesAreTheCRDs(t *testing.T) {
	rules, err := loadHubRules(crd.TasksFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	task, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1beta1.Task{
		TypeMeta: metav1.TypeMeta{APIVersion: "minitask.dev/v1beta1", Kind: "Task"},
		Spec: v1beta1.TaskSpec{Description: strings.Repeat("d", 4097), Steps: []v1beta1.Step{{Name: "s", Image: "i"}},
			Params: []v1beta1.ParamSpec{{Name: "p", Default: ptr.To(strings.Repeat("x", 65537))}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rules.validateCreate(t.Context(), task) {
		got = append(got, e.Field+" "+string(e.Type))
	}
	want := []string{"<nil> FieldValueInvalid", // CEL's rules wait for the schema's errors, as in the API server
		"spec.description FieldValueTooLong", "spec.params[0].default FieldValueTooLong"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if _, err := loadHubRules(crd.TasksFile, "v9"); err == nil {
		t.Error("loading a version the CRD does not have: no error")
	}
}

// TestPathsAreTheMarkers: the paths served are the ones controller-gen
// writes into the ValidatingWebhookConfiguration.
func TestPathsAreTheMarkers(t *testing.T) {
	src, err := os.ReadFile("setup.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^// \+kubebuilder:webhook:path=([^,]+),`).FindAllSubmatch(src, -1) {
		got = append(got, string(m[1]))
	}
	if diff := cmp.Diff([]string{TaskPath, TaskRunPath}, got); diff != "" {
		t.Errorf("marker paths (-want +got):\n%s", diff)
	}
}
