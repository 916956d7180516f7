// Package runstate reads what a TaskRun's Succeeded condition says, in the
// words the plugin shows: whether the run is finished, and its one-word status.
package runstate

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Succeeded returns the run's Succeeded condition, nil before the controller
// has seen the run.
func Succeeded(run *v1beta1.TaskRun) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded)
}

// Finished reports whether the run has ended, for good: its condition is True
// or False.
func Finished(run *v1beta1.TaskRun) bool {
	c := Succeeded(run)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// Summary is the run's status in one word: Succeeded, Failed(REASON), or while
// it goes on its reason (Pending, Running, WaitingForTask), Cancelling once a
// cancel was asked for, and Pending before the controller has seen it.
func Summary(run *v1beta1.TaskRun) string {
	c := Succeeded(run)
	switch {
	case c != nil && c.Status == metav1.ConditionTrue:
		return "Succeeded"
	case c != nil && c.Status == metav1.ConditionFalse:
		return "Failed(" + c.Reason + ")"
	case run.Spec.Status == v1beta1.TaskRunSpecStatusCancelled:
		return "Cancelling"
	case c != nil && c.Reason != "":
		return c.Reason
	default:
		return string(v1beta1.ReasonPending)
	}
}
