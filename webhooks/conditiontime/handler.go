package conditiontime

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// timePattern is what a time of ours may be (v1.TimePattern).
var timePattern = regexp.MustCompile(v1.TimePattern)

// handler refuses the condition times the match condition sends it.
type handler struct{}

// storedConditions is what the handler reads of a TaskRun: its conditions'
// types and times as JSON, never as metav1.Time, which would refuse to
// decode the very times it judges.
type storedConditions struct {
	Status struct {
		Conditions []struct {
			Type string `json:"type"`
			// LastTransitionTime is a string, unless a hostile or broken
			// object makes it another JSON value.
			LastTransitionTime any `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// Handle refuses the write when a condition's lastTransitionTime is a time
// v1.TimePattern refuses and the old object's condition of that type
// does not hold it as it is, as the match condition judges.
func (handler) Handle(_ context.Context, req admission.Request) admission.Response {
	var run, old storedConditions
	if err := json.Unmarshal(req.Object.Raw, &run); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if len(req.OldObject.Raw) > 0 {
		if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	stored := map[string]string{}
	for _, c := range old.Status.Conditions {
		if value, ok := c.LastTransitionTime.(string); ok {
			stored[c.Type] = value
		}
	}
	var errs field.ErrorList
	conditions := field.NewPath("status", "conditions")
	for i, c := range run.Status.Conditions {
		// Not a string: the schema refuses it before admission, unless it
		// is stored so and left as it is.
		value, ok := c.LastTransitionTime.(string)
		if !ok || timePattern.MatchString(value) {
			continue
		}
		if was, ok := stored[c.Type]; ok && was == value {
			continue
		}
		errs = append(errs, field.Invalid(conditions.Index(i).Child("lastTransitionTime"), value,
			"must be an RFC 3339 time such as 2024-05-01T10:00:00Z, which Go can read"))
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(schema.GroupKind{Group: v1.GroupVersion.Group, Kind: "TaskRun"}, req.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}
