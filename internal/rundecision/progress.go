package rundecision

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file decides the outcome of a run that goes on, and the last word on
// any outcome before it is written (Settle).

// Progress reports a Pod that is still going: Pending or Running.
func (a *Attempt) Progress() *Outcome {
	return a.nodeNotReady(FromPod(runpod.Progress(a.Pod, a.Steps(), a.MountHeld)))
}

// Settle is the outcome the reconcile writes: a retry that has not started a
// step yet says so (Retrying), and a first attempt that waits too long for
// its first step ends (PendingTimeout).
func (a *Attempt) Settle() *Outcome {
	a.Outcome = a.pendingTooLong(retryingWhilePending(a.Run, a.Outcome))
	return a.Outcome
}

// retryingWhilePending reports a run whose current attempt is a retry, and
// has not started a step yet, as Unknown/Retrying rather than Pending, saying
// which attempt failed, why, and what the new one waits for.
func retryingWhilePending(run *v1.TaskRun, o *Outcome) *Outcome {
	n := len(run.Status.Attempts)
	if n == 0 || o == nil || o.Status != metav1.ConditionUnknown || o.Reason != v1.ReasonPending {
		return o
	}
	return Unknown(v1.ReasonRetrying, "%s; attempt %d: %s", AttemptFailed(run, n-1), n+1, o.Message)
}

// pendingTimeoutReasons are the outcomes of a run that waits for its first step.
var pendingTimeoutReasons = map[v1.TaskRunReason]bool{
	v1.ReasonPending:        true,
	v1.ReasonWaitingForTask: true,
}

// pendingTooLong returns o, or, when o says the run's first attempt still
// waits for its first step and the run's timeouts.pending has passed,
// PendingTimeout, its message saying what held it (the Pending message it
// had); or SidecarFailed when a sidecar held the first step back for a
// reason of its own (runpod.HeldBySidecar: an image, an exit, a probe). What holds a run back is whatever the decisions found: no Task, a
// Pod the API server refuses for now, a Pod not scheduled, an image not
// pulled, a volume not mounted; the manager's --image-pull-timeout and
// --pod-config-timeout still end the run sooner when they pass first. The
// bound covers the run's first attempt only: a retry's wait (for its failed
// attempt's node to be fenced, say) is the retry's own business. Before it
// passes, it asks for the run to be looked at again when it will: nothing
// about the run may change meanwhile.
func (a *Attempt) pendingTooLong(o *Outcome) *Outcome {
	pending := a.Run.Spec.Timeouts.Pending
	if pending == nil || pending.Duration <= 0 || o == nil || o.Status != metav1.ConditionUnknown ||
		!pendingTimeoutReasons[o.Reason] || len(a.Run.Status.Attempts) > 0 {
		return o
	}
	if left := a.StartTime().Add(pending.Duration).Sub(a.Now); left > 0 {
		a.RecheckWithin(left)
		return o
	}
	if a.Pod != nil {
		if h := runpod.HeldBySidecar(a.Pod); h != nil {
			return SidecarFailed(a.Run, h, pending.Duration)
		}
	}
	return Failed(v1.ReasonPendingTimeout, "TaskRun %q did not start its first step within %s (spec.timeouts.pending): %s",
		a.Run.Name, pending.Round(time.Second), o.Message)
}

// SidecarFailed is the outcome of a run whose sidecar h did not start and
// become ready within pending, its timeouts.pending.
func SidecarFailed(run *v1.TaskRun, h *runpod.SidecarHold, pending time.Duration) *Outcome {
	return Failed(v1.ReasonSidecarFailed, "TaskRun %q: sidecar %q did not start and become ready within %s (spec.timeouts.pending): %s",
		run.Name, h.Sidecar, pending.Round(time.Second), h.Why)
}
