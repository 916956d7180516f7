package conversion

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

func TestPhaseFromCondition(t *testing.T) {
	tests := map[string]struct {
		condition *metav1.Condition
		want      v1alpha1.TaskRunPhase
	}{
		"no condition":              {nil, v1alpha1.TaskRunPhaseNone},
		"Unknown Pending":           {cond(metav1.ConditionUnknown, v1beta1.ReasonPending), v1alpha1.TaskRunPhasePending},
		"Unknown WaitingForTask":    {cond(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask), v1alpha1.TaskRunPhasePending},
		"Unknown any other reason":  {cond(metav1.ConditionUnknown, "SomethingNew"), v1alpha1.TaskRunPhasePending},
		"Unknown Running":           {cond(metav1.ConditionUnknown, v1beta1.ReasonRunning), v1alpha1.TaskRunPhaseRunning},
		"True Succeeded":            {cond(metav1.ConditionTrue, v1beta1.ReasonSucceeded), v1alpha1.TaskRunPhaseSucceeded},
		"False StepFailed":          {cond(metav1.ConditionFalse, v1beta1.ReasonStepFailed), v1alpha1.TaskRunPhaseFailed},
		"False TaskRunTimeout":      {cond(metav1.ConditionFalse, v1beta1.ReasonTimeout), v1alpha1.TaskRunPhaseFailed},
		"False TaskRunCancelled":    {cond(metav1.ConditionFalse, v1beta1.ReasonCancelled), v1alpha1.TaskRunPhaseFailed},
		"False InvalidParams":       {cond(metav1.ConditionFalse, v1beta1.ReasonInvalidParams), v1alpha1.TaskRunPhaseFailed},
		"False PodFailed":           {cond(metav1.ConditionFalse, v1beta1.ReasonPodFailed), v1alpha1.TaskRunPhaseFailed},
		"False Failed":              {cond(metav1.ConditionFalse, v1beta1.ReasonFailed), v1alpha1.TaskRunPhaseFailed},
		"status the API disallows":  {cond("Maybe", v1beta1.ReasonRunning), v1alpha1.TaskRunPhaseNone},
		"empty status":              {cond("", v1beta1.ReasonRunning), v1alpha1.TaskRunPhaseNone},
		"True whatever its reason":  {cond(metav1.ConditionTrue, v1beta1.ReasonRunning), v1alpha1.TaskRunPhaseSucceeded},
		"False whatever its reason": {cond(metav1.ConditionFalse, v1beta1.ReasonRunning), v1alpha1.TaskRunPhaseFailed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PhaseFromCondition(tc.condition)); diff != "" {
				t.Errorf("PhaseFromCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionFromPhase(t *testing.T) {
	tests := map[string]struct {
		phase v1alpha1.TaskRunPhase
		want  *metav1.Condition
	}{
		"empty phase: no condition": {v1alpha1.TaskRunPhaseNone, nil},
		"Pending":                   {v1alpha1.TaskRunPhasePending, ptr.To(succeeded(metav1.ConditionUnknown, v1beta1.ReasonPending, later))},
		"Running":                   {v1alpha1.TaskRunPhaseRunning, ptr.To(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, later))},
		"Succeeded":                 {v1alpha1.TaskRunPhaseSucceeded, ptr.To(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, later))},
		"Failed":                    {v1alpha1.TaskRunPhaseFailed, ptr.To(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, later))},
		"phase outside the enum":    {"Exploded", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ConditionFromPhase(tc.phase, later)); diff != "" {
				t.Errorf("ConditionFromPhase() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDerivedTransitionTime(t *testing.T) {
	tests := map[string]struct {
		run  *v1alpha1.TaskRun
		want metav1.Time
	}{
		"finishTime first":           {spokeRun().Started(started).Finished(finished).Obj(), finished},
		"finishTime without a start": {spokeRun().Finished(finished).Obj(), finished},
		"else startTime":             {spokeRun().Started(started).Obj(), started},
		"else creationTimestamp":     {spokeRun().Obj(), created},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, derivedTransitionTime(tc.run)); diff != "" {
				t.Errorf("derivedTransitionTime() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// cond returns a Succeeded condition with only a status and a reason.
func cond(status metav1.ConditionStatus, reason v1beta1.TaskRunReason) *metav1.Condition {
	return &metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: status, Reason: string(reason)}
}
