package runstate_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
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
			if diff := cmp.Diff(tc.want, runstate.PhaseFromCondition(tc.condition)); diff != "" {
				t.Errorf("PhaseFromCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionFromPhase(t *testing.T) {
	at := metav1.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
	withTime := func(c *metav1.Condition) *metav1.Condition {
		c.LastTransitionTime = at
		return c
	}
	tests := map[string]struct {
		phase v1alpha1.TaskRunPhase
		want  *metav1.Condition
	}{
		"empty phase: no condition": {v1alpha1.TaskRunPhaseNone, nil},
		"Pending":                   {v1alpha1.TaskRunPhasePending, withTime(cond(metav1.ConditionUnknown, v1beta1.ReasonPending))},
		"Running":                   {v1alpha1.TaskRunPhaseRunning, withTime(cond(metav1.ConditionUnknown, v1beta1.ReasonRunning))},
		"Succeeded":                 {v1alpha1.TaskRunPhaseSucceeded, withTime(cond(metav1.ConditionTrue, v1beta1.ReasonSucceeded))},
		"Failed":                    {v1alpha1.TaskRunPhaseFailed, withTime(cond(metav1.ConditionFalse, v1beta1.ReasonFailed))},
		"phase outside the enum":    {"Exploded", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runstate.ConditionFromPhase(tc.phase, at)); diff != "" {
				t.Errorf("ConditionFromPhase() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReasons: each reason once, and a run with it is finished exactly when
// its status says so.
func TestReasons(t *testing.T) {
	seen := map[v1beta1.TaskRunReason]bool{}
	for _, r := range runstate.Reasons() {
		if seen[r.Reason] {
			t.Errorf("reason %s listed twice", r.Reason)
		}
		seen[r.Reason] = true
		run := &v1beta1.TaskRun{Status: v1beta1.TaskRunStatus{Conditions: []metav1.Condition{*cond(r.Status, r.Reason)}}}
		if got, want := runstate.Finished(run), r.Status != metav1.ConditionUnknown; got != want {
			t.Errorf("Finished() of a run %s/%s = %t, want %t", r.Status, r.Reason, got, want)
		}
	}
}

// cond returns a Succeeded condition with only a status and a reason.
func cond(status metav1.ConditionStatus, reason v1beta1.TaskRunReason) *metav1.Condition {
	return &metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: status, Reason: string(reason)}
}
