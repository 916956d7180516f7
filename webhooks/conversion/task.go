package conversion

import (
	"context"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// taskLostFields are the Task fields that v1beta1 expresses and v1alpha1
// cannot, at their v1beta1 paths: the stash's v1beta1 section, which
// releases 2 to 4 wrote and read. Its types are v1's where v1 and v1beta1
// agree (the same JSON), and v1beta1's for params, whose defaults are text.
type taskLostFields struct {
	Spec taskSpecLostFields `json:"spec,omitzero"`
}

// taskSpecLostFields keeps release 2's keys (description, params) as they
// were, so that a stash written by release 2 reads unchanged; later
// releases only add keys.
type taskSpecLostFields struct {
	Description string                    `json:"description,omitempty"`
	Params      []v1beta1.ParamSpec       `json:"params,omitempty"`
	Workspaces  []v1.WorkspaceDeclaration `json:"workspaces,omitempty"`
	// Steps holds, by step name, only the steps with fields v1alpha1
	// cannot express (command, args, workingDir, env, envFrom,
	// computeResources, onError): see stepLostFields.
	Steps   []stepLostFields       `json:"steps,omitempty"`
	Results []v1.ResultDeclaration `json:"results,omitempty"`
}

// taskV1Fields are the Task fields only v1 expresses: the stash's v1
// section, on objects of either spoke.
type taskV1Fields struct {
	Spec taskSpecV1Fields `json:"spec,omitzero"`
}

type taskSpecV1Fields struct {
	// Params holds, by name, the type and properties of each param that
	// is not a plain string.
	Params []paramTypeStash `json:"params,omitempty"`
	// Steps holds, by step name, only the steps with fields neither spoke
	// expresses (securityContext, imagePullPolicy, timeout): see
	// stepV1Fields. Release 7's, as are the two below.
	Steps        []stepV1Fields   `json:"steps,omitempty"`
	StepTemplate *v1.StepTemplate `json:"stepTemplate,omitempty"`
	Sidecars     []v1.Sidecar     `json:"sidecars,omitempty"`
}

// isEmpty reports whether s holds nothing, so that no stash is needed.
func (s *taskSpecV1Fields) isEmpty() bool {
	return s.Params == nil && s.Steps == nil && s.StepTemplate == nil && s.Sidecars == nil
}

// alphaTaskStash is the conversion annotation of a v1alpha1 Task.
type alphaTaskStash = conversionData[taskLostFields, taskV1Fields]

// ConvertTaskToHub converts a v1alpha1 Task to v1, restoring the fields
// that an earlier conversion stashed in the conversion annotation, whichever
// release wrote it. As in Kubernetes' generated conversions, dst may share
// memory with src, which is never changed.
func ConvertTaskToHub(ctx context.Context, src *v1alpha1.Task, dst *v1.Task) error {
	dst.ObjectMeta = src.ObjectMeta
	var lost alphaTaskStash
	restoreLostFields(ctx, &dst.ObjectMeta, &lost)

	dst.Spec = v1.TaskSpec{
		Description: lost.V1beta1.Spec.Description,
		Params:      paramSpecsToHub(lost.V1beta1.Spec.Params, lost.V1.Spec.Params),
		Workspaces:  lost.V1beta1.Spec.Workspaces,
		Results:     lost.V1beta1.Spec.Results,
		Steps:       stepsToHub(src.Spec.Steps, lost.V1beta1.Spec.Steps, lost.V1.Spec.Steps),
		// Release 7's.
		StepTemplate: lost.V1.Spec.StepTemplate,
		Sidecars:     lost.V1.Spec.Sidecars,
	}
	return nil
}

// ConvertTaskFromHub converts a v1 Task to v1alpha1, stashing the fields
// v1alpha1 cannot express in the conversion annotation. As in Kubernetes'
// generated conversions, dst may share memory with src, which is never changed.
func ConvertTaskFromHub(ctx context.Context, src *v1.Task, dst *v1alpha1.Task) error {
	stashLostFields(ctx, &dst.ObjectMeta, taskFromHub(src, dst))
	return nil
}

// taskFromHub sets dst to what v1alpha1 expresses of src and returns what it
// cannot, for the stash.
func taskFromHub(src *v1.Task, dst *v1alpha1.Task) alphaTaskStash {
	dst.ObjectMeta = src.ObjectMeta

	steps, lostSteps, stepFields := stepsFromHub(src.Spec.Steps)
	dst.Spec = v1alpha1.TaskSpec{Steps: steps}

	params, paramTypes := paramSpecsFromHub(nilIfEmpty(src.Spec.Params))
	return alphaTaskStash{
		V1beta1: taskLostFields{Spec: taskSpecLostFields{
			Description: src.Spec.Description,
			Params:      params,
			Workspaces:  nilIfEmpty(src.Spec.Workspaces),
			Steps:       lostSteps,
			Results:     nilIfEmpty(src.Spec.Results),
		}},
		V1: taskV1Fields{Spec: taskSpecV1Fields{
			Params:       paramTypes,
			Steps:        stepFields,
			StepTemplate: src.Spec.StepTemplate,
			Sidecars:     nilIfEmpty(src.Spec.Sidecars),
		}},
	}
}
