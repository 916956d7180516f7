package rundecision

import (
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file decides when the controller stops a run's Pod itself: a run
// cancelled or past its deadline (before its status says so), and a run that
// ended while its Pod went on (after).

// StopRequested ends a run that is cancelled or has timed out, or whose
// step without a script has run past its own timeout (commandStepTimedOut),
// nil for none: its Pod, if any, is then stopped.
func (a *Attempt) StopRequested() *Outcome {
	switch {
	case runstate.CancelRequested(a.Run):
		return a.mayStillRun(Cancelled(a.Run))
	case a.TimedOut():
		return a.mayStillRun(TimedOut(a.Run, a.Timeout))
	}
	if o := a.commandStepTimedOut(); o != nil {
		return a.mayStillRun(o)
	}
	return nil
}

// commandStepTimedOut ends a run whose running step has a timeout that no
// wrapper enforces (a step without a script: runstate.StepTimeouts) and has
// run past it, counted from its container's start, which is its command's;
// nil for none. Its Pod is then stopped as a cancelled run's is: the
// kubelet sends the step SIGTERM, and SIGKILL after the Pod's grace
// period. Before the timeout, it asks for the run to be looked at again
// when it passes: nothing about the run may change meanwhile.
func (a *Attempt) commandStepTimedOut() *Outcome {
	if a.Pod == nil {
		return nil
	}
	timeouts := runstate.StepTimeouts(a.Pod)
	if len(timeouts) == 0 {
		return nil
	}
	containers := runstate.Steps(a.Pod)
	for i, step := range a.Steps() {
		timeout, ok := timeouts[containers[i].Container]
		if !ok || step.State != v1.StepRunning || step.StartedAt == nil {
			continue
		}
		if left := step.StartedAt.Add(timeout).Sub(a.Now); left > 0 {
			a.RecheckWithin(left)
			continue
		}
		return StepTimedOut(step.Name, timeout)
	}
	return nil
}

// stopsPodAfterEnd are the reasons of a run that ends while its Pod goes on,
// for the controller to stop once the status says so.
var stopsPodAfterEnd = map[v1.TaskRunReason]bool{
	v1.ReasonImagePullFailed: true,
	v1.ReasonPodConfigFailed: true,
	v1.ReasonStepFailed:      true,
	v1.ReasonPendingTimeout:  true,
	v1.ReasonStepTimedOut:    true,
	v1.ReasonSidecarFailed:   true,
	v1.ReasonSucceeded:       true,
}

// PodOutlivesEnd reports whether run, finished, may have ended while its Pod
// went on, and with which reason: ImagePullFailed and PodConfigFailed
// (Held), PendingTimeout, SidecarFailed, and StepFailed or StepTimedOut for
// a step that cannot start or a chained step that failed (runpod.Outcome);
// and Succeeded, StepFailed or StepTimedOut for a run whose steps have
// ended while its sidecars run on. The controller stops such a Pod once the
// status says so, if it has not ended; a Succeeded, StepFailed or
// StepTimedOut run's only if its Pod still shows the failure while running
// (runpod.FailedWhileRunning) or its sidecars outlive its steps
// (runpod.SidecarsOutliveSteps). The Pod of any other finished run has ended,
// or was stopped before its status was written.
func PodOutlivesEnd(run *v1.TaskRun) (v1.TaskRunReason, bool) {
	ended := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionSucceeded)
	if ended == nil || run.Status.PodName == "" || !stopsPodAfterEnd[v1.TaskRunReason(ended.Reason)] {
		return "", false
	}
	return v1.TaskRunReason(ended.Reason), true
}
