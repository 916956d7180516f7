package runstate

import (
	"slices"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// ParamSource says where the value a run gets for a param comes from.
type ParamSource string

const (
	// FromRun: the run gives the param a value, which wins over any default.
	FromRun ParamSource = "run"
	// FromDefault: the run gives none, and the Task's default applies.
	FromDefault ParamSource = "default"
	// Missing: neither the run nor the Task gives a value; the controller
	// fails such a run with InvalidParams.
	Missing ParamSource = "missing"
)

// ParamValue is the value that a run gets for one param its Task declares.
type ParamValue struct {
	// Spec is the param as the Task declares it.
	Spec v1beta1.ParamSpec
	// Value is what $(params.NAME) expands to; empty when Missing.
	Value  string
	Source ParamSource
}

// ResolveParams returns, in the Task's order, the value that a run giving
// given gets for each param task declares: the run's, else the Task's
// default, else none (Missing). Values for params the Task does not declare
// play no part: the controller ignores them.
func ResolveParams(task *v1beta1.Task, given []v1beta1.Param) []ParamValue {
	values := make(map[string]string, len(given))
	for _, p := range given {
		values[p.Name] = p.Value
	}
	resolved := make([]ParamValue, len(task.Spec.Params))
	for i, spec := range task.Spec.Params {
		r := ParamValue{Spec: spec, Source: Missing}
		if v, ok := values[spec.Name]; ok {
			r.Value, r.Source = v, FromRun
		} else if spec.Default != nil {
			r.Value, r.Source = *spec.Default, FromDefault
		}
		resolved[i] = r
	}
	return resolved
}

// ParamValues returns what each param that task declares expands to in run's
// Pod, by name, and the sorted names of the params that are Missing.
func ParamValues(task *v1beta1.Task, run *v1beta1.TaskRun) (values map[string]string, missing []string) {
	values = make(map[string]string, len(task.Spec.Params))
	for _, p := range ResolveParams(task, run.Spec.Params) {
		if p.Source == Missing {
			missing = append(missing, p.Spec.Name)
			continue
		}
		values[p.Spec.Name] = p.Value
	}
	slices.Sort(missing)
	return values, missing
}
