package conversion

import (
	"context"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// betaTaskStash is the conversion annotation of a v1beta1 Task: only a v1
// section, since v1beta1 expresses the rest.
type betaTaskStash = conversionData[struct{}, taskV1Fields]

// ConvertBetaTaskToHub converts a v1beta1 Task to v1, restoring the param
// types an earlier conversion stashed in the conversion annotation. As in
// Kubernetes' generated conversions, dst may share memory with src, which
// is never changed.
func ConvertBetaTaskToHub(ctx context.Context, src *v1beta1.Task, dst *v1.Task) error {
	dst.ObjectMeta = src.ObjectMeta
	var lost betaTaskStash
	restoreLostFields(ctx, &dst.ObjectMeta, &lost)

	dst.Spec = v1.TaskSpec{
		Description: src.Spec.Description,
		Params:      paramSpecsToHub(src.Spec.Params, lost.V1.Spec.Params),
		Workspaces:  sameShapeSlice[v1.WorkspaceDeclaration](src.Spec.Workspaces),
		Results:     sameShapeSlice[v1.ResultDeclaration](src.Spec.Results),
		Steps:       betaStepsToHub(src.Spec.Steps, lost.V1.Spec.Steps),
		// Release 7's.
		StepTemplate: lost.V1.Spec.StepTemplate,
		Sidecars:     lost.V1.Spec.Sidecars,
	}
	return nil
}

// ConvertBetaTaskFromHub converts a v1 Task to v1beta1, stashing the param
// types v1beta1 cannot express in the conversion annotation. As in
// Kubernetes' generated conversions, dst may share memory with src, which
// is never changed.
func ConvertBetaTaskFromHub(ctx context.Context, src *v1.Task, dst *v1beta1.Task) error {
	lost := betaTaskFromHub(src, dst)
	if lost.V1.Spec.isEmpty() {
		// What nearly every Task is: nothing to encode, as it would encode
		// to {}.
		setConversionAnnotations(&dst.ObjectMeta, "", false)
		return nil
	}
	stashLostFields(ctx, &dst.ObjectMeta, lost)
	return nil
}

// betaTaskFromHub sets dst to what v1beta1 expresses of src and returns
// what it cannot, for the stash.
func betaTaskFromHub(src *v1.Task, dst *v1beta1.Task) betaTaskStash {
	dst.ObjectMeta = src.ObjectMeta
	params, paramTypes := paramSpecsFromHub(src.Spec.Params)
	steps, stepFields := betaStepsFromHub(src.Spec.Steps)
	dst.Spec = v1beta1.TaskSpec{
		Description: src.Spec.Description,
		Params:      params,
		Workspaces:  sameShapeSlice[v1beta1.WorkspaceDeclaration](src.Spec.Workspaces),
		Results:     sameShapeSlice[v1beta1.ResultDeclaration](src.Spec.Results),
		Steps:       steps,
	}
	return betaTaskStash{V1: taskV1Fields{Spec: taskSpecV1Fields{
		Params:       paramTypes,
		Steps:        stepFields,
		StepTemplate: src.Spec.StepTemplate,
		Sidecars:     nilIfEmpty(src.Spec.Sidecars),
	}}}
}
