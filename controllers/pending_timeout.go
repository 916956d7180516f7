package controllers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file ends a run that waits too long for its first step: past its
// spec.timeouts.pending, counted from its start, a run still Pending or
// WaitingForTask ends False/PendingTimeout, its message saying what held it
// (the Pending message it had). What holds a run back is whatever the
// stages found: no Task, a Pod the API server refuses for now, a Pod not
// scheduled, an image not pulled, a volume not mounted; the manager's
// --image-pull-timeout and --pod-config-timeout still end the run sooner
// when they pass first. The bound covers the run's first attempt only: a
// retry's wait (for its failed attempt's node to be fenced, say) is the
// retry's own business, and its step of the first attempt has started or
// failed by then.

// pendingTimeoutReasons are the outcomes of a run that waits for its first step.
var pendingTimeoutReasons = map[v1.TaskRunReason]bool{
	v1.ReasonPending:        true,
	v1.ReasonWaitingForTask: true,
}

// pendingTooLong returns o, or, when o says the run's first attempt still
// waits for its first step and the run's timeouts.pending has passed,
// PendingTimeout. Before that, it asks for the run to be looked at again
// when the bound passes: nothing about the run may change meanwhile.
func (s *runScope) pendingTooLong(o *outcome) *outcome {
	pending := s.run.Spec.Timeouts.Pending
	if pending == nil || pending.Duration <= 0 || o == nil || o.status != metav1.ConditionUnknown ||
		!pendingTimeoutReasons[o.reason] || len(s.run.Status.Attempts) > 0 {
		return o
	}
	if left := s.startTime().Add(pending.Duration).Sub(s.now); left > 0 {
		s.recheckWithin(left)
		return o
	}
	return failed(v1.ReasonPendingTimeout, "TaskRun %q did not start its first step within %s (spec.timeouts.pending): %s",
		s.run.Name, pending.Round(time.Second), o.message)
}
