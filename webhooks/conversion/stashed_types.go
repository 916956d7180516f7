package conversion

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// CheckStashedTypes refuses a v1beta1 Task or TaskRun whose params' text no
// longer parses as the type its conversion annotation gives it: a v1beta1
// writer that edited an array's or object's JSON text into something else.
// Conversion would read such text as a string, silently changing the
// param's type, so admission refuses it instead, naming the field.
func CheckStashedTypes(obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	switch obj := obj.(type) {
	case *v1beta1.Task:
		var stash betaTaskStash
		meta := obj.ObjectMeta
		restoreLostFields(context.Background(), &meta, &stash)
		types := firstByName(stash.V1.Spec.Params, func(s *paramTypeStash) string { return s.Name })
		for i := range obj.Spec.Params {
			p := &obj.Spec.Params[i]
			if s, ok := types[p.Name]; ok && p.Default != nil {
				errs = append(errs, checkText(field.NewPath("spec", "params").Index(i).Child("default"), *p.Default, (&v1.ParamSpec{Type: s.Type}).TypeOrDefault())...)
			}
		}
	case *v1beta1.TaskRun:
		var stash betaTaskRunStash
		meta := obj.ObjectMeta
		restoreLostFields(context.Background(), &meta, &stash)
		types := firstByName(stash.V1.Spec.Params, func(s *valueTypeStash) string { return s.Name })
		for i := range obj.Spec.Params {
			p := &obj.Spec.Params[i]
			if s, ok := types[p.Name]; ok {
				errs = append(errs, checkText(field.NewPath("spec", "params").Index(i).Child("value"), p.Value, s.Type)...)
			}
		}
	}
	return errs
}

// checkText refuses text at path unless it is a value of valueType.
func checkText(path *field.Path, text string, valueType v1.ParamType) field.ErrorList {
	if valueType != v1.ParamTypeArray && valueType != v1.ParamTypeObject {
		return nil
	}
	if _, ok := ParseValueText(text, valueType); ok {
		return nil
	}
	return field.ErrorList{field.Invalid(path, text, fmt.Sprintf(
		"the param is of type %s (%s says so): give the JSON text of an %s of strings, or write it through minitask.dev/v1",
		valueType, AnnotationConversionData, valueType))}
}
