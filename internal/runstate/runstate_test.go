package runstate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// TestCondition: what the plugin shows, and what the controller and the plugin
// decide, from one Succeeded condition.
func TestCondition(t *testing.T) {
	type want struct {
		Summary        string
		Finished       bool
		WaitingForTask bool
	}
	tests := map[string]struct {
		status    metav1.ConditionStatus // empty: no condition
		reason    v1.TaskRunReason
		cancelled bool
		want      want
	}{
		"not seen yet":          {want: want{"Pending", false, true}},
		"pending":               {status: metav1.ConditionUnknown, reason: v1.ReasonPending, want: want{"Pending", false, false}},
		"waiting for its Task":  {status: metav1.ConditionUnknown, reason: v1.ReasonWaitingForTask, want: want{"WaitingForTask", false, true}},
		"running":               {status: metav1.ConditionUnknown, reason: v1.ReasonRunning, want: want{"Running", false, false}},
		"cancel asked":          {status: metav1.ConditionUnknown, reason: v1.ReasonRunning, cancelled: true, want: want{"Cancelling", false, false}},
		"succeeded":             {status: metav1.ConditionTrue, reason: v1.ReasonSucceeded, want: want{"Succeeded", true, false}},
		"a step failed":         {status: metav1.ConditionFalse, reason: v1.ReasonStepFailed, want: want{"Failed(StepFailed)", true, false}},
		"cancelled":             {status: metav1.ConditionFalse, reason: v1.ReasonCancelled, cancelled: true, want: want{"Failed(TaskRunCancelled)", true, false}},
		"timed out":             {status: metav1.ConditionFalse, reason: v1.ReasonTimeout, want: want{"Failed(TaskRunTimeout)", true, false}},
		"failed, from v1alpha1": {status: metav1.ConditionFalse, reason: v1.ReasonFailed, want: want{"Failed(Failed)", true, false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{}
			if tc.status != "" {
				run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: tc.status, Reason: string(tc.reason)}}
			}
			if tc.cancelled {
				run.Spec.Status = v1.TaskRunSpecStatusCancelled
			}
			got := want{runstate.Summary(run), runstate.Finished(run), runstate.WaitingForTask(run)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
