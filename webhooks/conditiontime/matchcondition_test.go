package conditiontime

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/matchcond"
)

// webhookName is the webhook's name in config/webhook/manifests.yaml.
const webhookName = "vtaskrun-condition-times.minitask.dev"

// TestMatchConditionJudgesAsTheHandler evaluates the installed match
// condition (config/webhook/manifests.yaml) as the API server does, with
// its CEL environment as of the oldest Kubernetes the install supports, and
// the handler, on the same status updates: both must refuse exactly the
// writes that give a condition a time Go cannot read, and let one stored
// so be.
func TestMatchConditionJudgesAsTheHandler(t *testing.T) {
	const (
		good  = `"2024-05-01T10:00:00Z"`
		lower = `"2024-05-01t10:00:00z"`
	)
	condition := func(conditionType, lastTransitionTime string) string {
		return `{"type":"` + conditionType + `","status":"True","reason":"R","message":"","lastTransitionTime":` + lastTransitionTime + `}`
	}
	run := func(conditions ...string) string {
		return `{"apiVersion":"minitask.dev/v1","kind":"TaskRun","metadata":{"name":"r","namespace":"ns"},` +
			`"spec":{"taskRef":{"name":"t"}},"status":{"conditions":[` + strings.Join(conditions, ",") + `]}}`
	}
	noStatus := `{"apiVersion":"minitask.dev/v1","kind":"TaskRun","metadata":{"name":"r","namespace":"ns"},"spec":{"taskRef":{"name":"t"}}}`
	cases := map[string]struct {
		old, new string
		// refused are the fields the write is refused for; none if admitted.
		refused []string
	}{
		"no status":                         {old: noStatus, new: noStatus},
		"no conditions":                     {old: noStatus, new: run()},
		"a time Go reads":                   {old: noStatus, new: run(condition("Succeeded", good))},
		"a new lower-case time":             {old: noStatus, new: run(condition("Succeeded", lower)), refused: []string{"status.conditions[0].lastTransitionTime"}},
		"a lower-case time stored as it is": {old: run(condition("Succeeded", lower)), new: run(condition("Succeeded", lower))},
		"a lower-case time stored, moved to another index": {
			old: run(condition("Succeeded", lower), condition("Ready", good)),
			new: run(condition("Ready", good), condition("Succeeded", lower))},
		"a lower-case time stored for another type": {
			old: run(condition("Succeeded", lower)), new: run(condition("Succeeded", lower), condition("Ready", lower)),
			refused: []string{"status.conditions[1].lastTransitionTime"}},
		"another lower-case time": {
			old: run(condition("Succeeded", lower)), new: run(condition("Succeeded", `"2024-05-02t10:00:00z"`)),
			refused: []string{"status.conditions[0].lastTransitionTime"}},
		"a stored lower-case time repaired": {old: run(condition("Succeeded", lower)), new: run(condition("Succeeded", good))},
		"a zone offset Go refuses": {old: noStatus, new: run(condition("Succeeded", `"2024-05-01T10:00:00+25:00"`)),
			refused: []string{"status.conditions[0].lastTransitionTime"}},
		"a zone offset RFC 3339 refuses and Go reads": {old: noStatus, new: run(condition("Succeeded", `"2024-05-01T10:00:00+24:00"`)),
			refused: []string{"status.conditions[0].lastTransitionTime"}},
		"two at once": {old: noStatus, new: run(condition("Succeeded", lower), condition("Ready", `"2024-05-01 10:00:00Z"`)),
			refused: []string{"status.conditions[0].lastTransitionTime", "status.conditions[1].lastTransitionTime"}},
		// The date-time format refuses these before admission.
		"a day past its month's end, left to the format": {old: noStatus, new: run(condition("Succeeded", `"2024-02-30T10:00:00Z"`))},
		"no string, left to the schema":                  {old: noStatus, new: run(condition("Succeeded", `17`))},
		"no time at all":                                 {old: noStatus, new: run(condition("Succeeded", `null`))},
	}
	matcher := installedMatchCondition(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			result := matcher.Match(t.Context(), statusUpdate(t, tc.old, tc.new), nil, nil)
			if result.Error != nil {
				t.Fatalf("evaluating the match condition: %v", result.Error)
			}
			if result.Matches != (len(tc.refused) > 0) {
				t.Errorf("the match condition sends the write to the webhook: %t, want %t", result.Matches, len(tc.refused) > 0)
			}

			response := handler{}.Handle(t.Context(), ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Name: "r", Namespace: "ns", Operation: admissionv1.Update, SubResource: "status",
				Object: runtime.RawExtension{Raw: []byte(tc.new)}, OldObject: runtime.RawExtension{Raw: []byte(tc.old)},
			}})
			var refused []string
			if !response.Allowed {
				if response.Result == nil || response.Result.Reason != "Invalid" || response.Result.Details == nil {
					t.Fatalf("the handler refused without naming fields: %+v", response.Result)
				}
				for _, cause := range response.Result.Details.Causes {
					refused = append(refused, cause.Field)
					if !strings.Contains(cause.Message, "must be an RFC 3339 time such as 2024-05-01T10:00:00Z") {
						t.Errorf("%s: message %q does not say what a time must be", cause.Field, cause.Message)
					}
				}
			}
			if diff := cmp.Diff(tc.refused, refused); diff != "" {
				t.Errorf("fields the handler refuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebhookConfiguration pins what the package doc says of the installed
// webhook: status updates of v1 TaskRuns alone, v1alpha1 and v1beta1 ones
// converted to it, refused when it does not answer, and the match condition
// judging by v1.TimePattern, which the marker must repeat.
func TestWebhookConfiguration(t *testing.T) {
	w := installedWebhook(t)
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail: a write the match condition selects must be refused even when the webhook is down", w.FailurePolicy)
	}
	if w.MatchPolicy == nil || *w.MatchPolicy != admissionregistrationv1.Equivalent {
		t.Errorf("matchPolicy %v, want Equivalent, so that v1alpha1 status writes are judged too", w.MatchPolicy)
	}
	if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil || *w.ClientConfig.Service.Path != Path {
		t.Errorf("clientConfig %+v, want the path %s", w.ClientConfig, Path)
	}
	want := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{v1.GroupVersion.Group}, APIVersions: []string{v1.GroupVersion.Version},
			Resources: []string{"taskruns/status"}},
	}}
	if diff := cmp.Diff(want, w.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if len(w.MatchConditions) != 1 || !strings.Contains(w.MatchConditions[0].Expression, "matches(r'"+v1.TimePattern+"')") {
		t.Errorf("the match condition does not match times with v1.TimePattern: %+v", w.MatchConditions)
	}
}

// installedWebhook is the webhook's entry in config/webhook/manifests.yaml.
func installedWebhook(t *testing.T) admissionregistrationv1.ValidatingWebhook {
	t.Helper()
	webhooks := matchcond.Webhooks(t)
	i := slices.IndexFunc(webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return w.Name == webhookName })
	if i < 0 {
		t.Fatalf("%s has no webhook %s", matchcond.Manifests, webhookName)
	}
	return webhooks[i]
}

// installedMatchCondition compiles the webhook's match conditions as the
// API server of the oldest supported Kubernetes does.
func installedMatchCondition(t *testing.T) matchconditions.Matcher {
	t.Helper()
	w := installedWebhook(t)
	return matchcond.Compile(t, w.FailurePolicy, w.MatchConditions...)
}

// statusUpdate is a write of newJSON over oldJSON to a TaskRun's status, as
// the API server hands it to admission.
func statusUpdate(t *testing.T, oldJSON, newJSON string) *admission.VersionedAttributes {
	t.Helper()
	object := func(text string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(text), &obj.Object); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	obj, old := object(newJSON), object(oldJSON)
	gvk := v1.GroupVersion.WithKind("TaskRun")
	attributes := admission.NewAttributesRecord(obj, old, gvk, "ns", "r", v1.GroupVersion.WithResource("taskruns"),
		"status", admission.Update, nil, false, &user.DefaultInfo{Name: "test"})
	return &admission.VersionedAttributes{Attributes: attributes, VersionedObject: admission.NewLazyObject(obj), VersionedOldObject: admission.NewLazyObject(old), VersionedKind: gvk}
}
