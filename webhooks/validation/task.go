package validation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/params"
)

// taskGroupKind names Tasks in the errors kubectl prints.
var taskGroupKind = schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: "Task"}

// TaskValidator checks what the CRD schema cannot: that every $(params.X) a
// step uses is well formed and declared by its Task.
type TaskValidator struct{}

var _ admission.Validator[*v1beta1.Task] = TaskValidator{}

// ValidateCreate rejects a new Task whose steps use malformed or undeclared params.
func (TaskValidator) ValidateCreate(_ context.Context, task *v1beta1.Task) (admission.Warnings, error) {
	return nil, invalid(task, validateTask(task))
}

// ValidateUpdate rejects a Task whose changed spec uses malformed or undeclared params.
func (TaskValidator) ValidateUpdate(_ context.Context, oldTask, task *v1beta1.Task) (admission.Warnings, error) {
	// A spec that does not change is let through as it is (ratcheting): Tasks
	// stored before this webhook existed must still take metadata edits,
	// finalizer removal and the storage migration's rewrite.
	if equality.Semantic.DeepEqual(oldTask.Spec, task.Spec) {
		return nil, nil
	}
	return nil, invalid(task, validateTask(task))
}

// ValidateDelete allows every deletion: a Task's content cannot make deleting it unsafe.
func (TaskValidator) ValidateDelete(context.Context, *v1beta1.Task) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns errs into the Invalid status the API server relays to the
// client, or nil when there are none.
func invalid(task *v1beta1.Task, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(taskGroupKind, task.Name, errs)
}

// validateTask returns every malformed or undeclared param reference in the
// Task's steps, each on the field that holds it, so one round trip shows the
// user all there is to fix.
func validateTask(task *v1beta1.Task) field.ErrorList {
	declared := make(map[string]bool, len(task.Spec.Params))
	for _, p := range task.Spec.Params {
		declared[p.Name] = true
	}
	var errs field.ErrorList
	steps := field.NewPath("spec", "steps")
	for i, step := range task.Spec.Steps {
		errs = append(errs, validateRefs(steps.Index(i).Child("image"), step.Name, step.Image, declared)...)
		errs = append(errs, validateRefs(steps.Index(i).Child("script"), step.Name, step.Script, declared)...)
	}
	return errs
}

// validateRefs checks the param references in value, the text of the field
// at path in the named step. Each undeclared param is reported once per field,
// with the reference as the bad value rather than the whole field, which may
// be a long script.
func validateRefs(path *field.Path, step, value string, declared map[string]bool) field.ErrorList {
	refs, err := params.Find(value)
	if err != nil {
		// The detail quotes the malformed text; repeating a whole script as
		// the value would bury it.
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("step %q: %v", step, err))}
	}
	var errs field.ErrorList
	reported := map[string]bool{}
	for _, ref := range refs {
		if declared[ref.Name] || reported[ref.Name] {
			continue
		}
		reported[ref.Name] = true
		errs = append(errs, field.Invalid(path, value[ref.Start:ref.End],
			fmt.Sprintf("step %q uses undeclared param %q", step, ref.Name)))
	}
	return errs
}
