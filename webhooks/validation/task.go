package validation

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// taskGroupKind names Tasks in the errors kubectl prints.
var taskGroupKind = schema.GroupKind{Group: v1.GroupVersion.Group, Kind: "Task"}

// TaskValidator checks what the CRD schema cannot: that every $(params.X),
// $(workspaces.NAME.path) and $(results.NAME.path) a step uses is well
// formed and declared by its Task and fits its param's type, that each
// param's default is of its type (paramtypes.go), and that a Task with
// results can hand them back (validateResults).
type TaskValidator struct{}

var _ admission.Validator[*v1.Task] = TaskValidator{}

// ValidateCreate rejects a new Task whose params or references are wrong.
func (TaskValidator) ValidateCreate(_ context.Context, task *v1.Task) (admission.Warnings, error) {
	return nil, invalid(task.Name, validateTask(task))
}

// ValidateUpdate rejects a Task whose changed spec has wrong params or references.
func (TaskValidator) ValidateUpdate(_ context.Context, oldTask, task *v1.Task) (admission.Warnings, error) {
	// A spec that does not change is let through as it is (ratcheting): Tasks
	// stored before a rule existed must still take metadata edits,
	// finalizer removal and the storage migration's rewrite.
	if equality.Semantic.DeepEqual(oldTask.Spec, task.Spec) {
		return nil, nil
	}
	return nil, invalid(task.Name, validateTask(task))
}

// ValidateDelete allows every deletion: a Task's content cannot make deleting it unsafe.
func (TaskValidator) ValidateDelete(context.Context, *v1.Task) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns errs into the Invalid status the API server relays to the
// client about the Task called name, or nil when there are none.
func invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(taskGroupKind, name, errs)
}

// validateTask returns every param whose declaration or default is wrong,
// every malformed reference in the Task's steps, and every reference to a
// param, workspace or result the Task does not declare or uses against its
// type, each on the field that holds it, so one round trip shows the user
// all there is to fix.
func validateTask(task *v1.Task) field.ErrorList {
	return validateTaskSpec(&task.Spec, field.NewPath("spec"))
}

// validateTaskSpec is validateTask's check of spec, a Task's spec or a
// run's inline one, each error on its field under at.
func validateTaskSpec(spec *v1.TaskSpec, at *field.Path) field.ErrorList {
	errs := validateParamSpecs(spec.Params, at.Child("params"))
	declared := declaredNames{
		params.KindParam:     make(map[string]bool, len(spec.Params)),
		params.KindWorkspace: make(map[string]bool, len(spec.Workspaces)),
		params.KindResult:    make(map[string]bool, len(spec.Results)),
	}
	specs := make(map[string]*v1.ParamSpec, len(spec.Params))
	for i := range spec.Params {
		p := &spec.Params[i]
		declared[params.KindParam][p.Name] = true
		specs[p.Name] = p
	}
	for _, w := range spec.Workspaces {
		declared[params.KindWorkspace][w.Name] = true
	}
	for _, r := range spec.Results {
		declared[params.KindResult][r.Name] = true
	}
	steps := at.Child("steps")
	for i, step := range spec.Steps {
		for _, f := range referringFields(steps.Index(i), step) {
			errs = append(errs, validateRefs(f, "step "+strconv.Quote(step.Name), declared, specs)...)
		}
	}
	if template := spec.StepTemplate; template != nil {
		// Every step gets the template's env, references replaced as in
		// its own.
		env := at.Child("stepTemplate", "env")
		for j, e := range template.Env {
			f := textField{path: env.Index(j).Child("value"), value: e.Value}
			errs = append(errs, validateRefs(f, "the stepTemplate", declared, specs)...)
		}
	}
	// A sidecar's texts are expanded as a step's, but it mounts no results
	// volume: a result's path is no reference it may use.
	noResults := declaredNames{params.KindParam: declared[params.KindParam], params.KindWorkspace: declared[params.KindWorkspace]}
	sidecars := at.Child("sidecars")
	for i, s := range spec.Sidecars {
		asStep := v1.Step{Image: s.Image, Script: s.Script, Command: s.Command, Args: s.Args, WorkingDir: s.WorkingDir, Env: s.Env}
		for _, f := range referringFields(sidecars.Index(i), asStep) {
			errs = append(errs, validateRefs(f, "sidecar "+strconv.Quote(s.Name), noResults, specs)...)
		}
	}
	return append(errs, validateResults(spec, at)...)
}

// declaredNames holds, for each kind of reference, the names the Task declares.
type declaredNames map[params.Kind]map[string]bool

// textField is one text of a step that may hold references, and its path.
type textField struct {
	path  *field.Path
	value string
	// listItem marks an item of command or args, the one place where a
	// whole $(params.NAME[*]) becomes the array's items.
	listItem bool
}

// referringFields returns, in the order the API lists them, every field of
// step in which the controller replaces references: image, script, each
// command and args item, workingDir and each env value.
func referringFields(path *field.Path, step v1.Step) []textField {
	fields := []textField{
		{path: path.Child("image"), value: step.Image},
		{path: path.Child("script"), value: step.Script},
	}
	for j, c := range step.Command {
		fields = append(fields, textField{path: path.Child("command").Index(j), value: c, listItem: true})
	}
	for j, a := range step.Args {
		fields = append(fields, textField{path: path.Child("args").Index(j), value: a, listItem: true})
	}
	fields = append(fields, textField{path: path.Child("workingDir"), value: step.WorkingDir})
	for j, e := range step.Env {
		fields = append(fields, textField{path: path.Child("env").Index(j).Child("value"), value: e.Value})
	}
	return fields
}

// validateRefs checks the references in f, a field of owner (a step or a
// sidecar, its name quoted, or the stepTemplate): each must be declared, and each param reference must fit its param's
// type (typedRefProblem). An undeclared name, and a reference used
// against its type, is reported once per field, with the reference as
// the bad value rather than the whole field, which may be a long script.
func validateRefs(f textField, owner string, declared declaredNames, specs map[string]*v1.ParamSpec) field.ErrorList {
	refs, err := params.Find(f.value)
	if err != nil {
		// The detail quotes the malformed text; repeating a whole script as
		// the value would bury it.
		return field.ErrorList{field.Invalid(f.path, field.OmitValueType{}, fmt.Sprintf("%s: %v", owner, err))}
	}
	var errs field.ErrorList
	reported := declaredNames{}
	mistyped := map[string]bool{}
	for _, ref := range refs {
		text := f.value[ref.Start:ref.End]
		if !declared[ref.Kind][ref.Name] {
			if reported[ref.Kind][ref.Name] {
				continue
			}
			if reported[ref.Kind] == nil {
				reported[ref.Kind] = map[string]bool{}
			}
			reported[ref.Kind][ref.Name] = true
			errs = append(errs, field.Invalid(f.path, text,
				fmt.Sprintf("%s uses undeclared %s %q", owner, ref.Kind.Noun(), ref.Name)))
			continue
		}
		if ref.Kind != params.KindParam || mistyped[text] {
			continue
		}
		if problem := typedRefProblem(ref, specs[ref.Name], f); problem != "" {
			mistyped[text] = true
			errs = append(errs, field.Invalid(f.path, text, fmt.Sprintf("%s: %s", owner, problem)))
		}
	}
	return errs
}

// validateResults checks that a Task that declares results can hand them
// back: only a script step writes the termination message that carries
// them, and the last step's message is the last word, so the last step
// must be a script step; and no workspace may be mounted where the results
// volume is.
func validateResults(spec *v1.TaskSpec, at *field.Path) field.ErrorList {
	if len(spec.Results) == 0 {
		return nil
	}
	var errs field.ErrorList
	if last := len(spec.Steps) - 1; last >= 0 && spec.Steps[last].Script == "" {
		errs = append(errs, field.Invalid(at.Child("steps").Index(last), spec.Steps[last].Name,
			fmt.Sprintf("the Task declares results (spec.results), so its last step must have a script: only a script step hands results back, "+
				"and step %q runs a command or its image's entrypoint; add a script step after it", spec.Steps[last].Name)))
	}
	for i, ws := range spec.Workspaces {
		mountPath := runstate.WorkspaceMountPath(ws)
		if clean := path.Clean(mountPath); clean == runstate.ResultsDir || strings.HasPrefix(clean, runstate.ResultsDir+"/") {
			errs = append(errs, field.Invalid(at.Child("workspaces").Index(i).Child("mountPath"), mountPath,
				fmt.Sprintf("the Task declares results (spec.results), whose files every step finds in %s; mount workspace %q elsewhere", runstate.ResultsDir, ws.Name)))
		}
	}
	return errs
}
