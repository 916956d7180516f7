package controllers

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/minitask-dev/minitask/internal/runstate"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file turns what a reconcile decided into the TaskRun's status: the
// Succeeded condition (the table in docs/lifecycle.md), the steps, the
// results and the times. What the run's Pod says of them is internal/runpod's
// (runpod.Outcome, runpod.Progress, runpod.StepStates, runpod.Results).
// Everything here is pure, so every row is tested without an API server.

// maxConditionMessage is metav1.Condition's schema limit: a longer message
// would make every status patch fail.
const maxConditionMessage = 32768

// outcome is what a reconcile decided about a run: its Succeeded condition.
type outcome struct {
	status  metav1.ConditionStatus
	reason  v1.TaskRunReason
	message string
}

// finished reports whether the outcome ends the run.
func (o *outcome) finished() bool {
	return o.status != metav1.ConditionUnknown
}

func unknown(reason v1.TaskRunReason, format string, args ...any) *outcome {
	return &outcome{status: metav1.ConditionUnknown, reason: reason, message: fmt.Sprintf(format, args...)}
}

func failed(reason v1.TaskRunReason, format string, args ...any) *outcome {
	return &outcome{status: metav1.ConditionFalse, reason: reason, message: fmt.Sprintf(format, args...)}
}

// fromPod is the outcome that the run's Pod gives it (internal/runpod), nil
// for none.
func fromPod(c *runpod.Condition) *outcome {
	if c == nil {
		return nil
	}
	return &outcome{status: c.Status, reason: c.Reason, message: c.Message}
}

func waitingForTask(run *v1.TaskRun) *outcome {
	return unknown(v1.ReasonWaitingForTask, "waiting for Task %q, which does not exist", run.Spec.TaskRef.Name)
}

func invalidParams(problems runstate.ParamProblems) *outcome {
	return failed(v1.ReasonInvalidParams, "%s", problems.String())
}

func timedOut(run *v1.TaskRun, timeout time.Duration) *outcome {
	return failed(v1.ReasonTimeout, "TaskRun %q did not finish within %s", run.Name, timeout)
}

func cancelled(run *v1.TaskRun) *outcome {
	return failed(v1.ReasonCancelled, "TaskRun %q was cancelled", run.Name)
}

func podRejected(err error) *outcome {
	return failed(v1.ReasonPodFailed, "the API server rejected the Pod: %v", err)
}

// podRefused is the outcome of a run whose Pod the API server refused for a
// reason that can pass (classifyRefusal): the run waits, saying why.
func podRefused(podName, cause string, err error) *outcome {
	return unknown(v1.ReasonPending, "Pod %q not created yet: %s; retrying: %v", podName, cause, err)
}

// podTooLarge is the outcome of a run whose Pod would be too large
// (runpod.Build).
func podTooLarge(err *runpod.TooLargeError) *outcome {
	return failed(v1.ReasonInvalidParams, "%v; no Pod was created", err)
}

func podDeleted(podName string) *outcome {
	return fromPod(runpod.Deleted(podName))
}

func podNotOurs(podName string) *outcome {
	return failed(v1.ReasonPodFailed, "Pod %q already exists and is not controlled by this TaskRun", podName)
}

// applyStatus writes into run's status what a reconcile decided: o as the
// Succeeded condition, start as startTime if the run had none, the Pod and its
// steps if there is a Pod, and now as completionTime if o ends the run. The
// steps of a run whose Pod is gone stay as last seen, but for those of a run
// the controller stopped (see markStepsStopped). steps are runpod.StepStates(pod).
func applyStatus(run *v1.TaskRun, o *outcome, start time.Time, pod *corev1.Pod, steps []v1.StepState, now time.Time) {
	st := &run.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: start}
	}
	if pod != nil {
		st.PodName = pod.Name
		st.Steps = steps
		st.Results = runpod.Results(pod)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type:               v1.ConditionSucceeded,
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
	case v1.ReasonTimeout, v1.ReasonCancelled, v1.ReasonImagePullFailed, v1.ReasonPodConfigFailed:
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
func markStepsStopped(steps []v1.StepState, reason v1.TaskRunReason, now time.Time) {
	for i := range steps {
		step := &steps[i]
		if step.State == v1.StepTerminated {
			continue
		}
		if step.State == v1.StepRunning {
			step.FinishedAt = &metav1.Time{Time: now}
		}
		step.State = v1.StepTerminated
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
