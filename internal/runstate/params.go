package runstate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
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
	Spec v1.ParamSpec
	// Value is what the param's references expand to; nil when Missing.
	Value  *v1.ParamValue
	Source ParamSource
}

// ResolveParams returns, in the Task's order, the value that a run giving
// given gets for each param task declares: the run's, else the Task's
// default, else none (Missing). Values for params the Task does not declare
// play no part: the controller ignores them.
func ResolveParams(task *v1.Task, given []v1.Param) []ParamValue {
	values := make(map[string]*v1.ParamValue, len(given))
	for i := range given {
		values[given[i].Name] = &given[i].Value
	}
	resolved := make([]ParamValue, len(task.Spec.Params))
	for i, spec := range task.Spec.Params {
		r := ParamValue{Spec: spec, Source: Missing}
		if v, ok := values[spec.Name]; ok {
			r.Value, r.Source = v, FromRun
		} else if spec.Default != nil {
			r.Value, r.Source = spec.Default, FromDefault
		}
		resolved[i] = r
	}
	return resolved
}

// ParamProblems are why a run's params cannot make its Pod: the params that
// get no value, and those whose value is not of their type.
type ParamProblems struct {
	// Missing are the sorted names of the params with no value.
	Missing []string
	// WrongType says, for each param in the Task's order whose value is not
	// of its type, what is wrong: `param "files" is an array, but its value
	// is a string`.
	WrongType []string
}

// Any reports whether there is a problem.
func (p ParamProblems) Any() bool { return len(p.Missing) > 0 || len(p.WrongType) > 0 }

// String is the run's InvalidParams message: every problem, missing values first.
func (p ParamProblems) String() string {
	var parts []string
	if len(p.Missing) > 0 {
		parts = append(parts, "missing values for params with no default: "+strings.Join(p.Missing, ", "))
	}
	return strings.Join(append(parts, p.WrongType...), "; ")
}

// ParamValues returns what each param that task declares expands to in run's
// Pod, and what keeps them from it.
func ParamValues(task *v1.Task, run *v1.TaskRun) (params.Values, ParamProblems) {
	values := params.Values{Params: make(map[string]string, len(task.Spec.Params))}
	var problems ParamProblems
	for _, p := range ResolveParams(task, run.Spec.Params) {
		if p.Source == Missing {
			problems.Missing = append(problems.Missing, p.Spec.Name)
			continue
		}
		if wrong := CheckValue(&p.Spec, p.Value); wrong != "" {
			from := "its value"
			if p.Source == FromDefault {
				from = "its default"
			}
			problems.WrongType = append(problems.WrongType, fmt.Sprintf("param %q: %s %s", p.Spec.Name, from, wrong))
			continue
		}
		switch p.Spec.TypeOrDefault() {
		case v1.ParamTypeArray:
			if values.Arrays == nil {
				values.Arrays = map[string][]string{}
			}
			values.Arrays[p.Spec.Name] = p.Value.ArrayVal
		case v1.ParamTypeObject:
			if values.Objects == nil {
				values.Objects = map[string]map[string]string{}
			}
			values.Objects[p.Spec.Name] = p.Value.ObjectVal
		default:
			values.Params[p.Spec.Name] = p.Value.StringVal
		}
	}
	slices.Sort(problems.Missing)
	return values, problems
}

// CheckValue says what is wrong with value as a value of the param spec
// declares, "" if nothing: a value of another type, or an object's value
// without one of the keys the param's properties declare. Keys it does not
// declare are let be: no reference can name them.
func CheckValue(spec *v1.ParamSpec, value *v1.ParamValue) string {
	want := spec.TypeOrDefault()
	got := value.Type
	if got == "" {
		got = v1.ParamTypeString
	}
	if got != want {
		return fmt.Sprintf("is %s, but the param is %s", TypeWithArticle(got), TypeWithArticle(want))
	}
	if want != v1.ParamTypeObject {
		return ""
	}
	var lacking []string
	for _, key := range PropertyNames(spec) {
		if _, ok := value.ObjectVal[key]; !ok {
			lacking = append(lacking, key)
		}
	}
	if len(lacking) == 0 {
		return ""
	}
	return fmt.Sprintf("lacks the keys the param declares: %s", strings.Join(lacking, ", "))
}

// PropertyNames are the keys an object param declares, sorted: for
// messages, which must read the same from one write to the next.
func PropertyNames(spec *v1.ParamSpec) []string {
	return slices.Sorted(maps.Keys(spec.Properties))
}

// TypeWithArticle is a param type as messages name it: "a string", "an
// array", "an object".
func TypeWithArticle(t v1.ParamType) string {
	if t == v1.ParamTypeString {
		return "a string"
	}
	return "an " + string(t)
}
