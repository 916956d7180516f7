package conversion

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// taskRunLostFields are the TaskRun fields that v1beta1 expresses and
// v1alpha1 cannot, at their v1beta1 paths: the stash's v1beta1 section,
// which releases 2 to 4 wrote and read. Its types are v1's where v1 and
// v1beta1 agree (the same JSON), and v1beta1's for params, whose values are
// text, and the timeout, which v1 holds as timeouts.total.
type taskRunLostFields struct {
	Spec   taskRunSpecLostFields   `json:"spec,omitzero"`
	Status taskRunStatusLostFields `json:"status,omitzero"`
}

// taskRunSpecLostFields keeps release 2's keys (params, timeout, status) as
// they were, so that a stash written by release 2 reads unchanged; later
// releases only add keys.
type taskRunSpecLostFields struct {
	Params             []v1beta1.Param       `json:"params,omitempty"`
	Timeout            *v1.Duration          `json:"timeout,omitempty"`
	Status             v1.TaskRunSpecStatus  `json:"status,omitempty"`
	Workspaces         []v1.WorkspaceBinding `json:"workspaces,omitempty"`
	ServiceAccountName string                `json:"serviceAccountName,omitempty"`
	// PodTemplate is a pointer so that an empty template, {}, survives.
	PodTemplate *v1.PodTemplate `json:"podTemplate,omitempty"`
	// Retries and TTLSecondsAfterFinished are pointers so that 0 survives,
	// apart from absent.
	Retries                 *int32           `json:"retries,omitempty"`
	RetryOn                 []v1.RetryReason `json:"retryOn,omitempty"`
	TTLSecondsAfterFinished *int32           `json:"ttlSecondsAfterFinished,omitempty"`
}

type taskRunStatusLostFields struct {
	// Conditions is the whole list, in order, whenever it is not exactly what
	// the phase derives; the Succeeded condition in it is restored only while
	// the phase still agrees with it.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Steps      []v1.StepState     `json:"steps,omitempty"`
	// Results keep each value's pointer, so that an empty value survives.
	Results  []v1.RunResult `json:"results,omitempty"`
	Attempts []v1.Attempt   `json:"attempts,omitempty"`
}

// taskRunV1Fields are the TaskRun fields only v1 expresses: the stash's v1
// section, on objects of either spoke.
type taskRunV1Fields struct {
	Spec   taskRunSpecV1Fields   `json:"spec,omitzero"`
	Status taskRunStatusV1Fields `json:"status,omitzero"`
}

type taskRunSpecV1Fields struct {
	// Params holds, by name, the type of each value that is not a string.
	Params []valueTypeStash `json:"params,omitempty"`
	// Pending is timeouts.pending.
	Pending *v1.Duration `json:"pending,omitempty"`
	// TaskSpec is the inline Task (release 7); the spoke's taskRef is then
	// InlineTaskRef.
	TaskSpec *v1.TaskSpec `json:"taskSpec,omitempty"`
}

// isEmpty reports whether f holds nothing, so that no stash is needed.
func (f *taskRunV1Fields) isEmpty() bool {
	return f.Spec.Params == nil && f.Spec.Pending == nil && f.Spec.TaskSpec == nil &&
		f.Status.TaskSpec == nil && f.Status.Sidecars == nil
}

// alphaTaskRunStash is the conversion annotation of a v1alpha1 TaskRun.
type alphaTaskRunStash = conversionData[taskRunLostFields, taskRunV1Fields]

// ConvertTaskRunToHub converts a v1alpha1 TaskRun to v1, restoring the
// fields that an earlier conversion stashed in the conversion annotation,
// whichever release wrote it. Where v1alpha1 expresses a field, its value
// wins over the stashed one. As in Kubernetes' generated conversions, dst
// may share memory with src, which is never changed.
func ConvertTaskRunToHub(ctx context.Context, src *v1alpha1.TaskRun, dst *v1.TaskRun) error {
	dst.ObjectMeta = src.ObjectMeta
	var stash alphaTaskRunStashRead
	restoreLostFields(ctx, &dst.ObjectMeta, &stash)
	lost := stash.V1beta1.lostFields()

	dst.Spec = v1.TaskRunSpec{
		TaskRef:                 hubTaskRef(src.Spec.TaskRef, stash.V1.Spec.TaskSpec),
		TaskSpec:                stash.V1.Spec.TaskSpec,
		Params:                  paramsToHub(lost.Spec.Params, stash.V1.Spec.Params),
		Timeouts:                timeoutsToHub(lost.Spec.Timeout, stash.V1.Spec.Pending),
		Status:                  lost.Spec.Status,
		Workspaces:              lost.Spec.Workspaces,
		ServiceAccountName:      lost.Spec.ServiceAccountName,
		PodTemplate:             lost.Spec.PodTemplate,
		Retries:                 lost.Spec.Retries,
		RetryOn:                 lost.Spec.RetryOn,
		TTLSecondsAfterFinished: lost.Spec.TTLSecondsAfterFinished,
	}
	derived := runstate.ConditionFromPhase(src.Status.Phase, derivedTransitionTime(src))
	dst.Status = v1.TaskRunStatus{
		Conditions:     restoreConditions(lost.Status.Conditions, src.Status.Phase, derived),
		PodName:        src.Status.PodName,
		StartTime:      src.Status.StartTime,
		CompletionTime: src.Status.FinishTime,
		Steps:          lost.Status.Steps,
		Results:        lost.Status.Results,
		Attempts:       lost.Status.Attempts,
		TaskSpec:       stash.V1.Status.TaskSpec,
		Sidecars:       stash.V1.Status.Sidecars,
	}
	return nil
}

// ConvertTaskRunFromHub converts a v1 TaskRun to v1alpha1, stashing the
// fields v1alpha1 cannot express in the conversion annotation. As in
// Kubernetes' generated conversions, dst may share memory with src, which
// is never changed.
func ConvertTaskRunFromHub(ctx context.Context, src *v1.TaskRun, dst *v1alpha1.TaskRun) error {
	stashLostFields(ctx, &dst.ObjectMeta, taskRunFromHub(src, dst))
	return nil
}

// taskRunFromHub sets dst to what v1alpha1 expresses of src and returns what
// it cannot, for the stash.
func taskRunFromHub(src *v1.TaskRun, dst *v1alpha1.TaskRun) alphaTaskRunStash {
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = v1alpha1.TaskRunSpec{TaskRef: spokeTaskRefName(&src.Spec)}
	dst.Status = v1alpha1.TaskRunStatus{
		Phase:      runstate.PhaseFromCondition(apimeta.FindStatusCondition(src.Status.Conditions, v1.ConditionSucceeded)),
		PodName:    src.Status.PodName,
		StartTime:  src.Status.StartTime,
		FinishTime: src.Status.CompletionTime,
	}

	params, valueTypes := paramsFromHub(nilIfEmpty(src.Spec.Params))
	total, pending := timeoutsFromHub(src.Spec.Timeouts)
	lost := taskRunLostFields{
		Spec: taskRunSpecLostFields{
			Params:                  params,
			Timeout:                 total,
			Status:                  src.Spec.Status,
			Workspaces:              nilIfEmpty(src.Spec.Workspaces),
			ServiceAccountName:      src.Spec.ServiceAccountName,
			PodTemplate:             src.Spec.PodTemplate,
			Retries:                 src.Spec.Retries,
			RetryOn:                 nilIfEmpty(src.Spec.RetryOn),
			TTLSecondsAfterFinished: src.Spec.TTLSecondsAfterFinished,
		},
		Status: taskRunStatusLostFields{
			Steps:    nilIfEmpty(src.Status.Steps),
			Results:  nilIfEmpty(src.Status.Results),
			Attempts: nilIfEmpty(src.Status.Attempts),
		},
	}
	derived := runstate.ConditionFromPhase(dst.Status.Phase, derivedTransitionTime(dst))
	if !conditionsAreDerived(src.Status.Conditions, derived) {
		lost.Status.Conditions = src.Status.Conditions
	}
	return alphaTaskRunStash{
		V1beta1: lost,
		V1: taskRunV1Fields{
			Spec: taskRunSpecV1Fields{Params: valueTypes, Pending: pending, TaskSpec: src.Spec.TaskSpec},
			Status: taskRunStatusV1Fields{
				TaskSpec: src.Status.TaskSpec,
				Sidecars: nilIfEmpty(src.Status.Sidecars),
			},
		},
	}
}

// timeoutsToHub is v1's timeouts of a spoke's timeout and the stashed
// pending one.
func timeoutsToHub(total, pending *v1.Duration) v1.Timeouts {
	return v1.Timeouts{Total: total, Pending: pending}
}

// timeoutsFromHub splits v1's timeouts into what a spoke's timeout holds
// and what the stash does.
func timeoutsFromHub(timeouts v1.Timeouts) (total, pending *v1.Duration) {
	return timeouts.Total, timeouts.Pending
}

// conditionsAreDerived reports whether conditions are exactly what converting
// the phase back gives (derived, or none when derived is nil), in which case
// they need not be stashed.
func conditionsAreDerived(conditions []metav1.Condition, derived *metav1.Condition) bool {
	if derived == nil {
		return len(conditions) == 0
	}
	return len(conditions) == 1 && sameCondition(conditions[0], *derived)
}

// sameCondition compares every field of two conditions, times by instant.
func sameCondition(a, b metav1.Condition) bool {
	return a.Type == b.Type &&
		a.Status == b.Status &&
		a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime) &&
		a.Reason == b.Reason &&
		a.Message == b.Message
}

// restoreConditions rebuilds the v1beta1 conditions from the stashed ones and
// the v1alpha1 phase. The stashed Succeeded condition comes back only when it
// still maps to the phase; otherwise a v1alpha1 writer changed the phase, and
// the condition derived from it wins. Conditions of other types come back
// as they were, in their order.
func restoreConditions(stashed []metav1.Condition, phase v1alpha1.TaskRunPhase, derived *metav1.Condition) []metav1.Condition {
	if stashed == nil {
		if derived == nil {
			return nil
		}
		return []metav1.Condition{*derived}
	}
	conditions := make([]metav1.Condition, 0, len(stashed)+1)
	sawSucceeded := false
	for i := range stashed {
		c := &stashed[i]
		// Only the first Succeeded condition is the one the phase came from.
		if c.Type != v1.ConditionSucceeded || sawSucceeded {
			conditions = append(conditions, *c)
			continue
		}
		sawSucceeded = true
		if runstate.PhaseFromCondition(c) == phase {
			conditions = append(conditions, *c)
		} else if derived != nil {
			conditions = append(conditions, *derived)
		}
	}
	if !sawSucceeded && derived != nil {
		conditions = append(conditions, *derived)
	}
	return nilIfEmpty(conditions)
}

// derivedTransitionTime is when a v1alpha1 run last changed phase, as well as
// v1alpha1 can tell: its finish, else its start, else its creation.
func derivedTransitionTime(run *v1alpha1.TaskRun) metav1.Time {
	switch {
	case run.Status.FinishTime != nil:
		return *run.Status.FinishTime
	case run.Status.StartTime != nil:
		return *run.Status.StartTime
	default:
		return run.CreationTimestamp
	}
}
