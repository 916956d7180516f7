package conversion

import (
	"context"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// betaTaskRunStash is the conversion annotation of a v1beta1 TaskRun: only
// a v1 section, since v1beta1 expresses the rest.
type betaTaskRunStash = conversionData[struct{}, taskRunV1Fields]

// ConvertBetaTaskRunToHub converts a v1beta1 TaskRun to v1, restoring the
// value types and the pending timeout an earlier conversion stashed in the
// conversion annotation. As in Kubernetes' generated conversions, dst may
// share memory with src, which is never changed.
func ConvertBetaTaskRunToHub(ctx context.Context, src *v1beta1.TaskRun, dst *v1.TaskRun) error {
	dst.ObjectMeta = src.ObjectMeta
	var lost betaTaskRunStash
	restoreLostFields(ctx, &dst.ObjectMeta, &lost)

	dst.Spec = v1.TaskRunSpec{
		TaskRef:                 hubTaskRef(src.Spec.TaskRef.Name, lost.V1.Spec.TaskSpec),
		TaskSpec:                lost.V1.Spec.TaskSpec,
		Params:                  paramsToHub(src.Spec.Params, lost.V1.Spec.Params),
		Timeouts:                timeoutsToHub(sameShape[v1.Duration](src.Spec.Timeout), lost.V1.Spec.Pending),
		Status:                  v1.TaskRunSpecStatus(src.Spec.Status),
		Workspaces:              sameShapeSlice[v1.WorkspaceBinding](src.Spec.Workspaces),
		ServiceAccountName:      src.Spec.ServiceAccountName,
		PodTemplate:             sameShape[v1.PodTemplate](src.Spec.PodTemplate),
		Retries:                 src.Spec.Retries,
		RetryOn:                 sameShapeSlice[v1.RetryReason](src.Spec.RetryOn),
		TTLSecondsAfterFinished: src.Spec.TTLSecondsAfterFinished,
	}
	dst.Status = betaStatusToHub(&src.Status, &lost.V1.Status)
	return nil
}

// ConvertBetaTaskRunFromHub converts a v1 TaskRun to v1beta1, stashing what
// v1beta1 cannot express in the conversion annotation. As in Kubernetes'
// generated conversions, dst may share memory with src, which is never
// changed.
func ConvertBetaTaskRunFromHub(ctx context.Context, src *v1.TaskRun, dst *v1beta1.TaskRun) error {
	lost := betaTaskRunFromHub(src, dst)
	if lost.V1.isEmpty() {
		// What nearly every run is: nothing to encode, as it would encode
		// to {}.
		setConversionAnnotations(&dst.ObjectMeta, "", false)
		return nil
	}
	stashLostFields(ctx, &dst.ObjectMeta, lost)
	return nil
}

// betaTaskRunFromHub sets dst to what v1beta1 expresses of src and returns
// what it cannot, for the stash.
func betaTaskRunFromHub(src *v1.TaskRun, dst *v1beta1.TaskRun) betaTaskRunStash {
	dst.ObjectMeta = src.ObjectMeta
	params, valueTypes := paramsFromHub(src.Spec.Params)
	total, pending := timeoutsFromHub(src.Spec.Timeouts)
	dst.Spec = v1beta1.TaskRunSpec{
		TaskRef:                 v1beta1.TaskRef{Name: spokeTaskRefName(&src.Spec)},
		Params:                  params,
		Timeout:                 sameShape[v1beta1.Duration](total),
		Status:                  v1beta1.TaskRunSpecStatus(src.Spec.Status),
		Workspaces:              sameShapeSlice[v1beta1.WorkspaceBinding](src.Spec.Workspaces),
		ServiceAccountName:      src.Spec.ServiceAccountName,
		PodTemplate:             sameShape[v1beta1.PodTemplate](src.Spec.PodTemplate),
		Retries:                 src.Spec.Retries,
		RetryOn:                 sameShapeSlice[v1beta1.RetryReason](src.Spec.RetryOn),
		TTLSecondsAfterFinished: src.Spec.TTLSecondsAfterFinished,
	}
	status, statusFields := betaStatusFromHub(&src.Status)
	dst.Status = status
	return betaTaskRunStash{V1: taskRunV1Fields{
		Spec:   taskRunSpecV1Fields{Params: valueTypes, Pending: pending, TaskSpec: src.Spec.TaskSpec},
		Status: statusFields,
	}}
}
