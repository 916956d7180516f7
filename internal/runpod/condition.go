package runpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file says what a run's Pod's own status makes of the run: the
// Succeeded condition once the Pod has ended (Outcome), and while it goes on
// (Progress), as the table in docs/lifecycle.md gives them. Whether the Pod
// has the last word is the controller's to decide: a cancel, a timeout, a
// hold that lasted too long or a retry may overrule it.

const (
	// podReasonEvicted and podReasonDeadlineExceeded are the kubelet's
	// pod.status.reason for a Pod it evicted, and for one it stopped at its
	// activeDeadlineSeconds.
	podReasonEvicted          = "Evicted"
	podReasonDeadlineExceeded = "DeadlineExceeded"
)

// Condition is what a run's Pod says of the run: the status, reason and
// message of its Succeeded condition.
type Condition struct {
	Status  metav1.ConditionStatus
	Reason  v1.TaskRunReason
	Message string
}

func unknown(reason v1.TaskRunReason, format string, args ...any) *Condition {
	return &Condition{Status: metav1.ConditionUnknown, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func failed(reason v1.TaskRunReason, format string, args ...any) *Condition {
	return &Condition{Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func succeeded() *Condition {
	return &Condition{Status: metav1.ConditionTrue, Reason: v1.ReasonSucceeded, Message: "every step exited 0"}
}

// Deleted is the condition of a run whose Pod, named podName, was deleted
// before it ended: being deleted, or gone.
func Deleted(podName string) *Condition {
	return failed(v1.ReasonPodFailed, "Pod %q was deleted before the run finished", podName)
}

// Outcome returns what pod's own status says about the run, or nil while
// the Pod may still run a step. steps are StepStates(pod)'s. A Pod stopped at
// its activeDeadlineSeconds comes out as PodFailed; the caller knows whether
// that deadline was the run's timeout or cancellation (StoppedEarly).
//
// A Pod whose every step's container has ended with code 0 has succeeded,
// whatever its phase says yet: the kubelet reports the containers' ends at
// one relist and the Pod's phase only at the next, a second later on its
// defaults, and no container of a Pod that never restarts them runs again.
func Outcome(pod *corev1.Pod, steps []v1.StepState) *Condition {
	phase := pod.Status.Phase
	if phase != corev1.PodFailed && pod.DeletionTimestamp == nil && everyContainerPassed(pod) {
		phase = corev1.PodSucceeded
	}
	switch phase {
	case corev1.PodSucceeded:
		if tooLarge := firstResultsTooLarge(pod); tooLarge != nil {
			return tooLarge.outcome()
		}
		return succeededPast(pod, continuedSteps(steps))
	case corev1.PodFailed:
		return failedPodOutcome(pod, steps)
	}
	if pod.DeletionTimestamp != nil {
		// Its containers are being killed: their exit codes would be the
		// deletion's, not the steps' own.
		return Deleted(pod.Name)
	}
	if step, f := firstStartFailure(pod); f != nil {
		// The kubelet would make the container again for ever, and fail
		// the same way each time: the step has failed, whatever the Pod's
		// phase says yet.
		return f.outcome(step.Name)
	}
	if c := chainFailure(pod, steps); c != nil {
		return c
	}
	return failureBesideSidecars(pod, steps)
}

// everyContainerPassed reports whether every step's container of pod has
// ended with code 0. Native sidecars (release 7's) are no steps: the kubelet
// stops them once the steps have ended, and what they exit with is no
// step's, so the run has succeeded whether they still run or were killed.
func everyContainerPassed(pod *corev1.Pod) bool {
	if !everyContainerEnded(pod) {
		return false
	}
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if statuses[step.Container].State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}

// chainFailure returns the failure of the first step of a chained Pod that
// failed, while the Pod has not ended: the steps after it are skipped, and
// run nothing (or, should a step's wrapper have died before it could hand
// over, wait until the Pod is stopped). nil for a Pod of init containers,
// whose kubelet ends the Pod at the first failure.
func chainFailure(pod *corev1.Pod, steps []v1.StepState) *Condition {
	if !runstate.Chained(pod) || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	return firstStepFailure(pod, steps)
}

// failureBesideSidecars returns the failure of the first step that failed of
// a Pod of init containers whose every step's container has ended while a
// native sidecar (release 7's) may still run: the kubelet reports the Pod
// Running until it has stopped its sidecars, which one that ignores SIGTERM
// makes last the Pod's grace period, yet no step runs again. nil for a Pod
// without sidecars, whose phase says Failed as soon as a step has failed.
func failureBesideSidecars(pod *corev1.Pod, steps []v1.StepState) *Condition {
	if runstate.Chained(pod) || len(runstate.NativeSidecars(pod)) == 0 || !everyContainerEnded(pod) {
		return nil
	}
	return firstStepFailure(pod, steps)
}

// firstStepFailure returns, in step order, the failure of the first step
// that failed, nil for none: a step that onError: continue let pass failed
// nothing.
func firstStepFailure(pod *corev1.Pod, steps []v1.StepState) *Condition {
	containers, statuses := runstate.Steps(pod), containerStatuses(pod)
	for i, step := range steps {
		if failedRun(step, statuses[containers[i].Container]) {
			return stepFailed(pod, step, containers[i].Container)
		}
	}
	return nil
}

// failedPodOutcome says why a Failed Pod failed. A Pod-level reason comes
// first: an evicted Pod's steps were killed, and their exit codes are the
// eviction's, not the steps' own.
func failedPodOutcome(pod *corev1.Pod, steps []v1.StepState) *Condition {
	switch reason := pod.Status.Reason; reason {
	case "":
	case podReasonEvicted:
		return failed(v1.ReasonPodFailed, "Pod %q was evicted: %s", pod.Name, pod.Status.Message)
	default:
		return failed(v1.ReasonPodFailed, "Pod %q failed (%s): %s", pod.Name, reason, pod.Status.Message)
	}
	// The first thing that went wrong, in step order: a step that failed,
	// or one whose results did not fit its message. A step that onError:
	// continue let pass failed nothing.
	tooLarge := firstResultsTooLarge(pod)
	containers, statuses := runstate.Steps(pod), containerStatuses(pod)
	for i, step := range steps {
		if tooLarge != nil && tooLarge.step == step.Name {
			return tooLarge.outcome()
		}
		if failedRun(step, statuses[containers[i].Container]) {
			return stepFailed(pod, step, containers[i].Container)
		}
	}
	if c := disruption(pod); c != nil && pod.Status.Message == "" {
		// Failed by the control plane, not the kubelet (the Pod garbage
		// collector, say): its condition says why.
		return failed(v1.ReasonPodFailed, "Pod %q failed (%s): %s", pod.Name, c.Reason, c.Message)
	}
	return failed(v1.ReasonPodFailed, "Pod %q failed: %s", pod.Name, pod.Status.Message)
}

// Progress returns the condition of a run whose Pod has not ended: Running
// once a step has started, Pending before, saying what holds it back (for
// Running, the current step, when the kubelet says it is held). steps are
// StepStates(pod)'s; mount is a volume the kubelet cannot mount
// (FailedMount), if one was found.
func Progress(pod *corev1.Pod, steps []v1.StepState, mount *Hold) *Condition {
	current, started := len(steps)-1, false
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].State != v1.StepTerminated {
			current = i
		}
		if steps[i].State != v1.StepWaiting {
			started = true
		}
	}
	if !started {
		return unknown(v1.ReasonPending, "%s", pendingMessage(pod, mount))
	}
	running := fmt.Sprintf("running step %q (%d of %d)", steps[current].Name, current+1, len(steps))
	if step, waiting := firstHeldStep(pod); waiting != nil && step == steps[current].Name {
		// A later step's turn has come, and its image cannot be pulled or
		// its container made (a missing Secret, say): say so, as the
		// Pending message does for the first step.
		return unknown(v1.ReasonRunning, "%s: %s", running, heldBecause(waiting))
	}
	return unknown(v1.ReasonRunning, "%s", running)
}

// StoppedEarly reports whether pod, the Pod of a run's current attempt, was
// ended before its steps were: gone (nil), being deleted before it ended, or
// stopped by the kubelet at its activeDeadlineSeconds. These are the ways the
// controller stops a Pod, and the ways someone else may; a Pod that ended on
// its own is not.
func StoppedEarly(pod *corev1.Pod) bool {
	switch {
	case pod == nil:
		return true
	case pod.Status.Phase == corev1.PodFailed:
		return pod.Status.Reason == podReasonDeadlineExceeded
	case pod.Status.Phase == corev1.PodSucceeded:
		return false
	default:
		return pod.DeletionTimestamp != nil
	}
}
