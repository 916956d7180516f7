package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// MaxValueBytes is the most bytes each string of a param's default or of a
// run's value may hold (API.md, "Limits"). v1 keeps defaults and values
// schemaless, so no CRD rule can bound them; admission does.
const MaxValueBytes = 64 << 10

// validateParamSpecs checks what a Task declares of its params, at (its
// spec.params, or a run's spec.taskSpec.params), each problem on its field: properties only on an object param, and always on
// one (its references' keys are checked against them), and a default of
// the param's type, with every key the param declares, each string at
// most MaxValueBytes.
func validateParamSpecs(specs []v1.ParamSpec, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range specs {
		p := &specs[i]
		path := at.Index(i)
		typ := p.TypeOrDefault()
		switch {
		case typ != v1.ParamTypeObject && p.Properties != nil:
			errs = append(errs, field.Forbidden(path.Child("properties"), fmt.Sprintf(
				"param %q is %s: only an object param declares properties; remove them, or give the param type: object",
				p.Name, runstate.TypeWithArticle(typ))))
		case typ == v1.ParamTypeObject && len(p.Properties) == 0:
			errs = append(errs, field.Required(path.Child("properties"), fmt.Sprintf(
				"param %q is an object: declare each of its keys in properties (properties: {KEY: {}}), "+
					"so that every $(params.%s.KEY) the steps use can be checked", p.Name, p.Name)))
		case typ == v1.ParamTypeObject:
			errs = append(errs, validatePropertyKeys(path.Child("properties"), p)...)
		}
		if p.Default == nil {
			continue
		}
		if wrong := runstate.CheckValue(p, p.Default); wrong != "" {
			errs = append(errs, field.Invalid(path.Child("default"), field.OmitValueType{},
				fmt.Sprintf("param %q: the default %s", p.Name, wrong)))
			continue
		}
		errs = append(errs, validateValueSize(path.Child("default"), p.Default)...)
	}
	return errs
}

// validatePropertyKeys refuses each key of p's properties, at path, that no
// reference can name ($(params.NAME.KEY) takes a name's bytes only, so
// a.b or an empty key never): a key the steps can never use is a mistake,
// and a value must still give it.
func validatePropertyKeys(path *field.Path, p *v1.ParamSpec) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(p.Properties)) {
		if !params.IsReferableKey(key) {
			errs = append(errs, field.Invalid(path.Key(key), key, fmt.Sprintf(
				"param %q: no reference can name this key, $(params.%s.KEY) takes letters, digits, '_' and '-' only; rename it",
				p.Name, p.Name)))
		}
	}
	return errs
}

// validateValueSize refuses each string of value, at path, longer than
// MaxValueBytes: the value itself, an array's item or an object's key's.
func validateValueSize(path *field.Path, value *v1.ParamValue) field.ErrorList {
	var errs field.ErrorList
	switch value.Type {
	case v1.ParamTypeArray:
		for j, item := range value.ArrayVal {
			if len(item) > MaxValueBytes {
				errs = append(errs, field.TooLong(path.Index(j), "", MaxValueBytes))
			}
		}
	case v1.ParamTypeObject:
		for _, k := range slices.Sorted(maps.Keys(value.ObjectVal)) {
			if len(value.ObjectVal[k]) > MaxValueBytes {
				errs = append(errs, field.TooLong(path.Key(k), "", MaxValueBytes))
			}
		}
	default:
		if len(value.StringVal) > MaxValueBytes {
			errs = append(errs, field.TooLong(path, "", MaxValueBytes))
		}
	}
	return errs
}

// typedRefProblem says what is wrong with ref, a reference in f to the
// declared param spec, for the param's type, "" if nothing: $(params.NAME[*])
// only of an array and only as a whole item of command or args;
// $(params.NAME.KEY) only of an object, with a key its properties declare;
// $(params.NAME) only of a string. The controller would leave what is
// refused here unreplaced, so a run would see the reference's own text.
func typedRefProblem(ref params.Ref, spec *v1.ParamSpec, f textField) string {
	typ := spec.TypeOrDefault()
	name := ref.Name
	switch {
	case ref.Star && typ != v1.ParamTypeArray:
		return fmt.Sprintf("$(params.%s[*]) stands for an array's items, but param %q is %s; %s",
			name, name, runstate.TypeWithArticle(typ), howToUse(spec))
	case ref.Star:
		if whole, ok := params.WholeArrayRef(f.value); f.listItem && ok && whole == name {
			return ""
		}
		return fmt.Sprintf("$(params.%s[*]) may only be a whole item of command or args, which becomes one item per element of the array; "+
			"make it an item of its own there (args: [\"$(params.%s[*])\"])", name, name)
	case ref.Key != "" && typ != v1.ParamTypeObject:
		return fmt.Sprintf("$(params.%s.%s) names a key, but param %q is %s, which has no keys; %s",
			name, ref.Key, name, runstate.TypeWithArticle(typ), howToUse(spec))
	case ref.Key != "":
		if _, ok := spec.Properties[ref.Key]; ok || len(spec.Properties) == 0 {
			// No properties at all is refused once, at the param.
			return ""
		}
		return fmt.Sprintf("param %q declares no key %q in its properties (it declares %s)",
			name, ref.Key, strings.Join(runstate.PropertyNames(spec), ", "))
	case typ != v1.ParamTypeString:
		return fmt.Sprintf("param %q is %s, which cannot be used as a string; %s", name, runstate.TypeWithArticle(typ), howToUse(spec))
	}
	return ""
}

// howToUse says how a step refers to a param of spec's type.
func howToUse(spec *v1.ParamSpec) string {
	switch spec.TypeOrDefault() {
	case v1.ParamTypeArray:
		return fmt.Sprintf("write $(params.%s[*]) as a whole item of command or args, for one item per element", spec.Name)
	case v1.ParamTypeObject:
		key := "KEY"
		if names := runstate.PropertyNames(spec); len(names) > 0 {
			key = names[0]
		}
		return fmt.Sprintf("write one of its keys, as $(params.%s.%s)", spec.Name, key)
	default:
		return fmt.Sprintf("write $(params.%s)", spec.Name)
	}
}
