package validation

import (
	"context"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/release6"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// taskGroupKind names Tasks in the errors kubectl prints.
var taskGroupKind = schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: "Task"}

// TaskValidator checks what the CRD schema cannot: that every $(params.X),
// $(workspaces.NAME.path) and $(results.NAME.path) a step uses is well
// formed and declared by its Task, and that a Task with results can hand
// them back (validateResults).
type TaskValidator struct{}

var _ admission.Validator[*v1beta1.Task] = TaskValidator{}

// ValidateCreate rejects a new Task whose steps use malformed or undeclared references.
func (TaskValidator) ValidateCreate(_ context.Context, task *v1beta1.Task) (admission.Warnings, error) {
	return nil, invalid(task, validateTask(task))
}

// ValidateUpdate rejects a Task whose changed spec uses malformed or undeclared references.
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

// validateTask returns every malformed reference in the Task's steps, and
// every reference to a param, workspace or result the Task does not declare, each on
// the field that holds it, so one round trip shows the user all there is to
// fix.
func validateTask(task *v1beta1.Task) field.ErrorList {
	// A Task written through v1 with what only v1 expresses reaches this
	// webhook as its v1beta1 form, the rest in its conversion annotation:
	// its references ($(params.files[*])) would read as malformed here.
	// Say what it needs instead, and what of its text is not of the type
	// the annotation gives it, as the stash guard does: the API server
	// reports whichever of the two refuses first.
	if release6.InStash(task.Annotations) {
		return append(conversion.CheckStashedTypes(task), release6.TaskFields(conversion.V1TaskOf(context.Background(), task))...)
	}
	declared := declaredNames{
		params.KindParam:     make(map[string]bool, len(task.Spec.Params)),
		params.KindWorkspace: make(map[string]bool, len(task.Spec.Workspaces)),
		params.KindResult:    make(map[string]bool, len(task.Spec.Results)),
	}
	for _, p := range task.Spec.Params {
		declared[params.KindParam][p.Name] = true
	}
	for _, w := range task.Spec.Workspaces {
		declared[params.KindWorkspace][w.Name] = true
	}
	for _, r := range task.Spec.Results {
		declared[params.KindResult][r.Name] = true
	}
	var errs field.ErrorList
	steps := field.NewPath("spec", "steps")
	for i, step := range task.Spec.Steps {
		for _, f := range referringFields(steps.Index(i), step) {
			errs = append(errs, validateRefs(f.path, step.Name, f.value, declared)...)
		}
	}
	return append(errs, validateResults(task)...)
}

// declaredNames holds, for each kind of reference, the names the Task declares.
type declaredNames map[params.Kind]map[string]bool

// textField is one text of a step that may hold references, and its path.
type textField struct {
	path  *field.Path
	value string
}

// referringFields returns, in the order the API lists them, every field of
// step in which the controller replaces references: image, script, each
// command and args item, workingDir and each env value.
func referringFields(path *field.Path, step v1beta1.Step) []textField {
	fields := []textField{
		{path.Child("image"), step.Image},
		{path.Child("script"), step.Script},
	}
	for j, c := range step.Command {
		fields = append(fields, textField{path.Child("command").Index(j), c})
	}
	for j, a := range step.Args {
		fields = append(fields, textField{path.Child("args").Index(j), a})
	}
	fields = append(fields, textField{path.Child("workingDir"), step.WorkingDir})
	for j, e := range step.Env {
		fields = append(fields, textField{path.Child("env").Index(j).Child("value"), e.Value})
	}
	return fields
}

// validateRefs checks the references in value, the text of the field at path
// in the named step. Each undeclared param or workspace is reported once per
// field, with the reference as the bad value rather than the whole field,
// which may be a long script.
func validateRefs(path *field.Path, step, value string, declared declaredNames) field.ErrorList {
	refs, err := params.Find(value)
	if err != nil {
		// The detail quotes the malformed text; repeating a whole script as
		// the value would bury it.
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("step %q: %v", step, err))}
	}
	var errs field.ErrorList
	reported := declaredNames{}
	for _, ref := range refs {
		if declared[ref.Kind][ref.Name] || reported[ref.Kind][ref.Name] {
			continue
		}
		if reported[ref.Kind] == nil {
			reported[ref.Kind] = map[string]bool{}
		}
		reported[ref.Kind][ref.Name] = true
		errs = append(errs, field.Invalid(path, value[ref.Start:ref.End],
			fmt.Sprintf("step %q uses undeclared %s %q", step, ref.Kind.Noun(), ref.Name)))
	}
	return errs
}

// validateResults checks that a Task that declares results can hand them
// back: only a script step writes the termination message that carries
// them, and the last step's message is the last word, so the last step
// must be a script step; and no workspace may be mounted where the results
// volume is.
func validateResults(task *v1beta1.Task) field.ErrorList {
	if len(task.Spec.Results) == 0 {
		return nil
	}
	var errs field.ErrorList
	if last := len(task.Spec.Steps) - 1; last >= 0 && task.Spec.Steps[last].Script == "" {
		errs = append(errs, field.Invalid(field.NewPath("spec", "steps").Index(last), task.Spec.Steps[last].Name,
			fmt.Sprintf("the Task declares results (spec.results), so its last step must have a script: only a script step hands results back, "+
				"and step %q runs a command or its image's entrypoint; add a script step after it", task.Spec.Steps[last].Name)))
	}
	for i, ws := range task.Spec.Workspaces {
		mountPath := runstate.WorkspaceMountPath(v1.WorkspaceDeclaration(ws))
		if clean := path.Clean(mountPath); clean == runstate.ResultsDir || strings.HasPrefix(clean, runstate.ResultsDir+"/") {
			errs = append(errs, field.Invalid(field.NewPath("spec", "workspaces").Index(i).Child("mountPath"), mountPath,
				fmt.Sprintf("the Task declares results (spec.results), whose files every step finds in %s; mount workspace %q elsewhere", runstate.ResultsDir, ws.Name)))
		}
	}
	return errs
}
