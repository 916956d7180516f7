// Package release6 names what only v1 can express, and so only release 6
// can run: array and object params (a type, properties, a value that is no
// string) and timeouts.pending. Release 5 serves v1 but stores v1beta1 and
// runs what v1beta1 holds; it refuses these at admission, in every version
// (a spoke's writer can carry them in the conversion annotation), and its
// controller leaves a run that has them, stored by release 6 before a
// rollback, Pending until a roll forward (API.md, "Releases 5 and 6").
package release6

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Fields names what only v1 expresses, for messages.
const Fields = "array or object params, timeouts.pending"

// Needed is what every message about such a field ends with.
const Needed = "needs minitask release 6 (v1 as the storage version); this release serves v1 but cannot run it, " +
	"and the release before it could not keep it"

// TaskFields lists what of task only release 6 can run, each at its path.
func TaskFields(task *v1.Task) field.ErrorList {
	var errs field.ErrorList
	params := field.NewPath("spec", "params")
	for i := range task.Spec.Params {
		p := &task.Spec.Params[i]
		path := params.Index(i)
		switch {
		case p.TypeOrDefault() != v1.ParamTypeString:
			errs = append(errs, field.Forbidden(path.Child("type"), string(p.Type)+" params "+Needed))
		case p.Properties != nil:
			errs = append(errs, field.Forbidden(path.Child("properties"), "object params "+Needed))
		case p.Default != nil && !isString(p.Default):
			errs = append(errs, field.Forbidden(path.Child("default"), "a default that is not a string "+Needed))
		}
	}
	return errs
}

// TaskRunFields lists what of run only release 6 can run, each at its path.
func TaskRunFields(run *v1.TaskRun) field.ErrorList {
	var errs field.ErrorList
	params := field.NewPath("spec", "params")
	for i := range run.Spec.Params {
		if !isString(&run.Spec.Params[i].Value) {
			errs = append(errs, field.Forbidden(params.Index(i).Child("value"), "a value that is not a string "+Needed))
		}
	}
	if run.Spec.Timeouts.Pending != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "timeouts", "pending"), "timeouts.pending "+Needed))
	}
	return errs
}

// isString reports whether value is a string, the only kind v1beta1 holds.
func isString(value *v1.ParamValue) bool {
	return value.Type == "" || value.Type == v1.ParamTypeString
}

// StashKey is the conversion annotation (conversion.AnnotationConversionData,
// which a test holds this to): on a v1beta1 object, its v1 member holds what
// only v1 expresses.
const StashKey = "minitask.dev/conversion-data"

// InStash reports whether annotations, a v1beta1 object's, carry anything
// only release 6 can run, in the v1 member of the conversion annotation: a
// param of type array or object, properties, a run's value of either type,
// timeouts.pending. (A param said to be a string is stashed too, and runs
// here.) Release 5's controller, which reads v1beta1, leaves such a run
// Pending.
func InStash(annotations map[string]string) bool {
	value, ok := annotations[StashKey]
	if !ok {
		return false
	}
	var stash struct {
		V1 struct {
			Spec struct {
				Params []struct {
					Type       v1.ParamType               `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"params"`
				Pending json.RawMessage `json:"pending"`
			} `json:"spec"`
		} `json:"v1"`
	}
	// A stash that does not parse converts without its v1 member, as a
	// v1beta1 object release 5 can run.
	if json.Unmarshal([]byte(value), &stash) != nil {
		return false
	}
	spec := &stash.V1.Spec
	if len(spec.Pending) > 0 && string(spec.Pending) != "null" {
		return true
	}
	for _, p := range spec.Params {
		if (p.Type != "" && p.Type != v1.ParamTypeString) || p.Properties != nil {
			return true
		}
	}
	return false
}
