package controllers

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file turns what a reconcile observed into the TaskRun's status: the
// Succeeded condition (the table in docs/lifecycle.md), the steps, the
// results (results_status.go) and the times. Everything here is pure, so every row is tested without an API server.

const (
	// podReasonEvicted and podReasonDeadlineExceeded are the kubelet's
	// pod.status.reason for a Pod it evicted, and for one it stopped at its
	// activeDeadlineSeconds.
	podReasonEvicted          = "Evicted"
	podReasonDeadlineExceeded = "DeadlineExceeded"

	// maxConditionMessage is metav1.Condition's schema limit: a longer message
	// would make every status patch fail.
	maxConditionMessage = 32768
)

// outcome is what a reconcile decided about a run: its Succeeded condition.
type outcome struct {
	status  metav1.ConditionStatus
	reason  v1beta1.TaskRunReason
	message string
}

// finished reports whether the outcome ends the run.
func (o *outcome) finished() bool {
	return o.status != metav1.ConditionUnknown
}

func unknown(reason v1beta1.TaskRunReason, format string, args ...any) *outcome {
	return &outcome{status: metav1.ConditionUnknown, reason: reason, message: fmt.Sprintf(format, args...)}
}

func failed(reason v1beta1.TaskRunReason, format string, args ...any) *outcome {
	return &outcome{status: metav1.ConditionFalse, reason: reason, message: fmt.Sprintf(format, args...)}
}

func succeeded() *outcome {
	return &outcome{status: metav1.ConditionTrue, reason: v1beta1.ReasonSucceeded, message: "every step exited 0"}
}

func waitingForTask(run *v1beta1.TaskRun) *outcome {
	return unknown(v1beta1.ReasonWaitingForTask, "waiting for Task %q, which does not exist", run.Spec.TaskRef.Name)
}

func invalidParams(missing []string) *outcome {
	return failed(v1beta1.ReasonInvalidParams, "missing values for params with no default: %s", strings.Join(missing, ", "))
}

func timedOut(run *v1beta1.TaskRun, timeout time.Duration) *outcome {
	return failed(v1beta1.ReasonTimeout, "TaskRun %q did not finish within %s", run.Name, timeout)
}

func cancelled(run *v1beta1.TaskRun) *outcome {
	return failed(v1beta1.ReasonCancelled, "TaskRun %q was cancelled", run.Name)
}

func podRejected(err error) *outcome {
	return failed(v1beta1.ReasonPodFailed, "the API server rejected the Pod: %v", err)
}

// podRefused is the outcome of a run whose Pod the API server refused for a
// reason that can pass (classifyRefusal): the run waits, saying why.
func podRefused(podName, cause string, err error) *outcome {
	return unknown(v1beta1.ReasonPending, "Pod %q not created yet: %s; retrying: %v", podName, cause, err)
}

// podTooLarge is the outcome of a run whose Pod would be too large
// (runpod.Build).
func podTooLarge(err *runpod.TooLargeError) *outcome {
	return failed(v1beta1.ReasonInvalidParams, "%v; no Pod was created", err)
}

func podDeleted(podName string) *outcome {
	return failed(v1beta1.ReasonPodFailed, "Pod %q was deleted before the run finished", podName)
}

func podNotOurs(podName string) *outcome {
	return failed(v1beta1.ReasonPodFailed, "Pod %q already exists and is not controlled by this TaskRun", podName)
}

// podOutcome returns what pod's own status says about the run, or nil while
// the Pod may still run a step. A Pod stopped at its activeDeadlineSeconds
// comes out as PodFailed; the caller knows whether that deadline was the
// run's timeout or cancellation.
func podOutcome(pod *corev1.Pod, steps []v1beta1.StepState) *outcome {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		if tooLarge := firstResultsTooLarge(pod); tooLarge != nil {
			return tooLarge.outcome()
		}
		return succeededPast(continuedSteps(steps))
	case corev1.PodFailed:
		return failedPodOutcome(pod, steps)
	}
	if pod.DeletionTimestamp != nil {
		// Its containers are being killed: their exit codes would be the
		// deletion's, not the steps' own.
		return podDeleted(pod.Name)
	}
	if step, f := firstStartFailure(pod); f != nil {
		// The kubelet would make the container again for ever, and fail
		// the same way each time: the step has failed, whatever the Pod's
		// phase says yet.
		return f.outcome(step.Name)
	}
	return nil
}

// failedPodOutcome says why a Failed Pod failed. A Pod-level reason comes
// first: an evicted Pod's steps were killed, and their exit codes are the
// eviction's, not the steps' own.
func failedPodOutcome(pod *corev1.Pod, steps []v1beta1.StepState) *outcome {
	switch reason := pod.Status.Reason; reason {
	case "":
	case podReasonEvicted:
		return failed(v1beta1.ReasonPodFailed, "Pod %q was evicted: %s", pod.Name, pod.Status.Message)
	default:
		return failed(v1beta1.ReasonPodFailed, "Pod %q failed (%s): %s", pod.Name, reason, pod.Status.Message)
	}
	// The first thing that went wrong, in step order: a step that failed,
	// or one whose results did not fit its message. A step that onError:
	// continue let pass failed nothing.
	tooLarge := firstResultsTooLarge(pod)
	containers := runstate.Steps(pod)
	for i, step := range steps {
		if tooLarge != nil && tooLarge.step == step.Name {
			return tooLarge.outcome()
		}
		if step.State == v1beta1.StepTerminated && step.ExitCode != nil && *step.ExitCode != 0 && step.Reason != v1beta1.StepReasonContinued {
			return stepFailed(pod, step, containers[i].Container)
		}
	}
	return failed(v1beta1.ReasonPodFailed, "Pod %q failed: %s", pod.Name, pod.Status.Message)
}

// progressOutcome returns the condition of a run whose Pod has not ended:
// Running once a step has started, Pending before, saying what holds it back
// (for Running, the current step, when the kubelet says it is held). mount
// is a volume the kubelet cannot mount, if one was found.
func progressOutcome(pod *corev1.Pod, steps []v1beta1.StepState, mount *hold) *outcome {
	current, started := len(steps)-1, false
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].State != v1beta1.StepTerminated {
			current = i
		}
		if steps[i].State != v1beta1.StepWaiting {
			started = true
		}
	}
	if !started {
		return unknown(v1beta1.ReasonPending, "%s", pendingMessage(pod, mount))
	}
	running := fmt.Sprintf("running step %q (%d of %d)", steps[current].Name, current+1, len(steps))
	if step, waiting := firstHeldStep(pod); waiting != nil && step == steps[current].Name {
		// A later step's turn has come, and its image cannot be pulled or
		// its container made (a missing Secret, say): say so, as the
		// Pending message does for the first step.
		return unknown(v1beta1.ReasonRunning, "%s: %s", running, heldBecause(waiting))
	}
	return unknown(v1beta1.ReasonRunning, "%s", running)
}

// stepStates reports pod's steps in order, from its container statuses: the
// init containers, then the container.
func stepStates(pod *corev1.Pod) []v1beta1.StepState {
	statuses := containerStatuses(pod)
	containers := runstate.Steps(pod)
	steps := make([]v1beta1.StepState, len(containers))
	for i, c := range containers {
		steps[i] = stepState(c.Name, statuses[c.Container])
	}
	applyScriptExitCodes(steps, pod)
	describeStartFailures(steps, pod)
	return steps
}

// containerStatuses returns the status of each of pod's containers, init
// containers and the container alike, by container name.
func containerStatuses(pod *corev1.Pod) map[string]*corev1.ContainerStatus {
	statuses := make(map[string]*corev1.ContainerStatus, len(pod.Status.InitContainerStatuses)+len(pod.Status.ContainerStatuses))
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			statuses[list[i].Name] = &list[i]
		}
	}
	return statuses
}

// stepState reports one step from its container's status, nil before the
// kubelet has reported any.
func stepState(name string, cs *corev1.ContainerStatus) v1beta1.StepState {
	step := v1beta1.StepState{Name: name, State: v1beta1.StepWaiting}
	switch {
	case cs == nil:
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		step.State = v1beta1.StepTerminated
		step.ExitCode = &t.ExitCode
		step.Reason = t.Reason
		step.StartedAt = timeOrNil(t.StartedAt)
		step.FinishedAt = timeOrNil(t.FinishedAt)
	case cs.State.Running != nil:
		step.State = v1beta1.StepRunning
		step.StartedAt = timeOrNil(cs.State.Running.StartedAt)
	case cs.State.Waiting != nil:
		step.Reason = cs.State.Waiting.Reason
	}
	return step
}

func timeOrNil(t metav1.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// applyStatus writes into run's status what a reconcile decided: o as the
// Succeeded condition, start as startTime if the run had none, the Pod and its
// steps if there is a Pod, and now as completionTime if o ends the run. The
// steps of a run whose Pod is gone stay as last seen, but for those of a run
// the controller stopped (see markStepsStopped). steps are stepStates(pod).
func applyStatus(run *v1beta1.TaskRun, o *outcome, start time.Time, pod *corev1.Pod, steps []v1beta1.StepState, now time.Time) {
	st := &run.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: start}
	}
	if pod != nil {
		st.PodName = pod.Name
		st.Steps = steps
		st.Results = runResults(pod)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type:               v1beta1.ConditionSucceeded,
		Status:             o.status,
		Reason:             string(o.reason),
		Message:            truncate(o.message, maxConditionMessage),
		ObservedGeneration: run.Generation,
		LastTransitionTime: metav1.Time{Time: now},
	})
	if o.finished() && st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: now}
	}
	switch o.reason {
	case v1beta1.ReasonTimeout, v1beta1.ReasonCancelled, v1beta1.ReasonImagePullFailed, v1beta1.ReasonPodConfigFailed:
		markStepsStopped(st.Steps, o.reason, now)
	}
}

// markStepsStopped reports every step of a run the controller stopped that
// had not finished as Terminated, with the run's reason: the run is final, so
// no later status would replace a Running or Waiting step, which would then
// claim forever that the step still runs or may yet run. A step that was
// running ended now, when its Pod was stopped; its exit code stays unset, as
// the kubelet reports it only after the kill, and nothing of the run is
// written after it ends.
func markStepsStopped(steps []v1beta1.StepState, reason v1beta1.TaskRunReason, now time.Time) {
	for i := range steps {
		step := &steps[i]
		if step.State == v1beta1.StepTerminated {
			continue
		}
		if step.State == v1beta1.StepRunning {
			step.FinishedAt = &metav1.Time{Time: now}
		}
		step.State = v1beta1.StepTerminated
		step.Reason = string(reason)
	}
}

// truncate shortens s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "..."
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
