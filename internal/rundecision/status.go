package rundecision

import (
	"time"
	"unicode/utf8"

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

// MaxConditionMessage is metav1.Condition's schema limit: a longer message
// would make every status patch fail.
const MaxConditionMessage = 32768

// ApplyStatus writes into the run's status what the reconcile decided
// (a.Outcome), with the current attempt's Pod and its steps, in whole
// seconds.
func (a *Attempt) ApplyStatus() {
	applyStatus(a.Run, a.Outcome, a.StartTime(), a.Pod, a.Steps(), a.Now.Truncate(time.Second))
	a.pinTaskSpec()
	if a.Outcome.Finished() && a.Node.Lost() {
		markStepsLost(a.Run.Status.Steps)
	}
}

// applyStatus writes into run's status o as the Succeeded condition, start
// as startTime if the run had none, the Pod and its steps if there is a Pod,
// and now as completionTime if o ends the run. The steps of a run whose Pod
// is gone stay as last seen, but for those of a run the controller stopped
// (see markStepsStopped). steps are runpod.StepStates(pod).
func applyStatus(run *v1.TaskRun, o *Outcome, start time.Time, pod *corev1.Pod, steps []v1.StepState, now time.Time) {
	st := &run.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: start}
	}
	if pod != nil {
		st.PodName = pod.Name
		st.Steps = steps
		st.Results = runpod.Results(pod)
		st.Sidecars = runpod.SidecarStates(pod)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type:               v1.ConditionSucceeded,
		Status:             o.Status,
		Reason:             string(o.Reason),
		Message:            Truncate(o.Message, MaxConditionMessage),
		ObservedGeneration: run.Generation,
		LastTransitionTime: metav1.Time{Time: now},
	})
	if o.Finished() && st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: completedAt(o, pod, steps, now)}
	}
	switch o.Reason {
	case v1.ReasonTimeout, v1.ReasonCancelled, v1.ReasonImagePullFailed, v1.ReasonPodConfigFailed:
		markStepsStopped(st.Steps, o.Reason, now)
	case v1.ReasonStepTimedOut:
		markTimedOutStep(st.Steps, now)
	}
}

// completedAt is when a run that o ends completed: now, or, for a run whose
// Pod has sidecars and whose last step has ended, that step's end. The run
// ends when its last step does, whatever its sidecars do then: the kubelet
// may report the step's end only with theirs, a grace period later.
func completedAt(o *Outcome, pod *corev1.Pod, steps []v1.StepState, now time.Time) time.Time {
	if pod == nil || len(steps) == 0 || len(runpod.SidecarStates(pod)) == 0 ||
		(o.Reason != v1.ReasonSucceeded && o.Reason != v1.ReasonStepFailed) {
		return now
	}
	last := steps[len(steps)-1]
	if last.State != v1.StepTerminated || last.FinishedAt == nil || last.FinishedAt.After(now) {
		return now
	}
	return last.FinishedAt.Time
}

// markTimedOutStep reports the step that a run's StepTimedOut stopped, if
// it still runs (a step without a script, whose Pod the controller stops
// at its timeout), as Terminated now, with reason TimedOut: the run is
// final, and no later status would say that it ended. The steps after it
// stay as they are, as a failed step's do. A script step that timed out
// has ended already, and says so itself (runpod.StepStates).
func markTimedOutStep(steps []v1.StepState, now time.Time) {
	for i := range steps {
		if step := &steps[i]; step.State == v1.StepRunning {
			step.State = v1.StepTerminated
			step.Reason = v1.StepReasonTimedOut
			step.FinishedAt = &metav1.Time{Time: now}
		}
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

// Truncate shortens s to at most n bytes, on a rune boundary.
func Truncate(s string, n int) string {
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
