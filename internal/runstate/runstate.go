// Package runstate is what a TaskRun is, in the one set of words that the
// controller, kubectl task, the webhooks and the tests share: whether a run is
// finished or waiting for its Task, the v1alpha1 phase of its Succeeded
// condition, the value each of its params gets, when it times out, how many
// attempts it may make and which failures it retries, and the names and
// labels of its Pod. A rule kept here cannot be read one way by the
// controller and another by a client.
package runstate

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Succeeded returns the run's Succeeded condition, nil before the controller
// has seen the run.
func Succeeded(run *v1.TaskRun) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, v1.ConditionSucceeded)
}

// Finished reports whether the run has ended, for good: its condition is True
// or False, whichever API version and writer set it.
func Finished(run *v1.TaskRun) bool {
	c := Succeeded(run)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// WaitingForTask reports whether the run has not got past its Task's absence:
// it is waiting for it, or has not been seen yet.
func WaitingForTask(run *v1.TaskRun) bool {
	c := Succeeded(run)
	return c == nil || (c.Status == metav1.ConditionUnknown && c.Reason == string(v1.ReasonWaitingForTask))
}

// CancelRequested reports whether the run's spec asks for it to be stopped.
func CancelRequested(run *v1.TaskRun) bool {
	return run.Spec.Status == v1.TaskRunSpecStatusCancelled
}

// Summary is the run's status in one word: Succeeded, Failed(REASON), or while
// it goes on its reason (Pending, Running, WaitingForTask), Cancelling once a
// cancel was asked for, and Pending before the controller has seen it.
func Summary(run *v1.TaskRun) string {
	c := Succeeded(run)
	switch {
	case c != nil && c.Status == metav1.ConditionTrue:
		return "Succeeded"
	case c != nil && c.Status == metav1.ConditionFalse:
		return "Failed(" + c.Reason + ")"
	case CancelRequested(run):
		return "Cancelling"
	case c != nil && c.Reason != "":
		return c.Reason
	default:
		return string(v1.ReasonPending)
	}
}
