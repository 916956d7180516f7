package conversion

import (
	"context"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// taskLostFields are the v1beta1 Task fields that v1alpha1 cannot express,
// at their v1beta1 paths.
type taskLostFields struct {
	Spec taskSpecLostFields `json:"spec,omitzero"`
}

// taskSpecLostFields keeps release 2's keys (description, params) as they
// were, so that a stash written by release 2 reads unchanged; later
// releases only add keys.
type taskSpecLostFields struct {
	Description string                         `json:"description,omitempty"`
	Params      []v1beta1.ParamSpec            `json:"params,omitempty"`
	Workspaces  []v1beta1.WorkspaceDeclaration `json:"workspaces,omitempty"`
	// Steps holds, by step name, only the steps with fields v1alpha1
	// cannot express (command, args, workingDir, env, envFrom,
	// computeResources, onError): see stepLostFields.
	Steps   []stepLostFields            `json:"steps,omitempty"`
	Results []v1beta1.ResultDeclaration `json:"results,omitempty"`
}

// ConvertTaskToHub converts a v1alpha1 Task to v1beta1, restoring the fields
// that an earlier conversion stashed in the conversion annotation. As in
// Kubernetes' generated conversions, dst may share memory with src, which is
// never changed.
func ConvertTaskToHub(ctx context.Context, src *v1alpha1.Task, dst *v1beta1.Task) error {
	dst.ObjectMeta = src.ObjectMeta
	var lost taskLostFields
	restoreLostFields(ctx, &dst.ObjectMeta, &lost)

	dst.Spec = v1beta1.TaskSpec{
		Description: lost.Spec.Description,
		Params:      lost.Spec.Params,
		Workspaces:  lost.Spec.Workspaces,
		Results:     lost.Spec.Results,
		Steps:       stepsToHub(src.Spec.Steps, lost.Spec.Steps),
	}
	return nil
}

// ConvertTaskFromHub converts a v1beta1 Task to v1alpha1, stashing the fields
// v1alpha1 cannot express in the conversion annotation. As in Kubernetes'
// generated conversions, dst may share memory with src, which is never changed.
func ConvertTaskFromHub(ctx context.Context, src *v1beta1.Task, dst *v1alpha1.Task) error {
	stashLostFields(ctx, &dst.ObjectMeta, taskFromHub(src, dst))
	return nil
}

// taskFromHub sets dst to what v1alpha1 expresses of src and returns what it
// cannot, for the stash.
func taskFromHub(src *v1beta1.Task, dst *v1alpha1.Task) taskLostFields {
	dst.ObjectMeta = src.ObjectMeta

	steps, lostSteps := stepsFromHub(src.Spec.Steps)
	dst.Spec = v1alpha1.TaskSpec{Steps: steps}

	return taskLostFields{Spec: taskSpecLostFields{
		Description: src.Spec.Description,
		Params:      nilIfEmpty(src.Spec.Params),
		Workspaces:  nilIfEmpty(src.Spec.Workspaces),
		Steps:       lostSteps,
		Results:     nilIfEmpty(src.Spec.Results),
	}}
}
