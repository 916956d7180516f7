package rundecision

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file decides what follows an attempt whose Pod has ended, is gone, or
// is lost with its node: the run ends, or, if it retries that failure, the
// next attempt starts, once the old Pod cannot still run. The state lives in
// the run's status alone, so that every reconcile, from whatever status it
// reads, takes the same next step: len(status.attempts) is the current
// attempt, and its Pod's name is derived from that number (CurrentPodName).
// A reconcile that records a failed attempt also creates the next attempt's
// Pod, before its status patch; one that crashed in between is followed by
// one that reads the same status, records the same attempt again, and finds
// that Pod by its name. So an attempt never gets two Pods, and none is
// skipped.

// Next is what follows the current attempt, once EndOrRetry has judged it.
type Next int

const (
	// Stand: the outcome stands, whether the attempt goes on (no outcome)
	// or the run ends.
	Stand Next = iota
	// WaitForFence: the attempt is lost with a node that is not fenced;
	// the next one waits for its Pod to be fenced or gone.
	WaitForFence
	// WaitForTermination: the attempt's Pod is being deleted and its steps
	// may still run; the next one waits for it to be gone.
	WaitForTermination
	// Retry: the attempt is recorded (RecordAttempt) and the next one's
	// Pod is looked for, then created.
	Retry
)

// EndOrRetry judges the current attempt: its outcome, if its Pod has ended,
// is gone, or is lost with its node (PodEnded), and what follows. stopPod
// says that the attempt's Pod must be stopped first: a Pod lost with its
// node, of a run that ends (for a kubelet that comes back, which then kills
// it rather than go on with a run that has ended), or the failed attempt's
// Pod that still runs, before the next attempt's (two attempts never run at
// once; it is kept, for its logs).
func (a *Attempt) EndOrRetry() (next Next, stopPod bool) {
	a.Outcome = a.PodEnded()
	// A run cancelled or timed out is not retried: the failure stands, as
	// a Pod's outcome does once it has ended.
	if !Retries(a.Run, a.Outcome) || runstate.CancelRequested(a.Run) || a.TimedOut() {
		return Stand, a.lostPodRuns()
	}
	if a.Node.Lost() && !a.Node.Fenced {
		// The lost Pod may still run: the next attempt's would run beside
		// it. The run waits, its Pod left to the taint manager's eviction,
		// for the Pod to be fenced or gone; the Node's or the Pod's watch
		// event brings it back.
		a.Outcome, a.WaitsForFence = a.waitForFence(a.Outcome), true
		return WaitForFence, false
	}
	if a.terminating() {
		// Deleted, but its kubelet has yet to stop its containers (their
		// grace period, a trap): the next attempt's steps would run beside
		// them. The Pod's deletion brings the run back.
		a.Outcome = a.waitForTermination(a.Outcome)
		return WaitForTermination, false
	}
	pod := a.Pod
	running := pod != nil && pod.DeletionTimestamp == nil && !ended(pod)
	return Retry, running
}

// PodEnded is the outcome of the current attempt if its Pod has ended, is
// gone after the run claimed it, or is lost with its node; nil while it goes
// on.
func (a *Attempt) PodEnded() *Outcome {
	var o *Outcome
	switch {
	case a.Node.Lost():
		return a.lostWithNode()
	case a.Pod != nil:
		o = FromPod(runpod.Outcome(a.Pod, a.Steps()))
	case a.Claimed:
		o = PodDeleted(a.PodName)
	}
	if o == nil || !runpod.StoppedEarly(a.Pod) {
		return o
	}
	// The controller ends the Pod of a cancelled or timed-out run, by
	// deleting it or lowering its deadline, before the run's status says
	// why; a reconcile that could not write that status (a conflict, a
	// crash) leaves the next one the stopped Pod. The run's own
	// cancellation or deadline says why it stopped, whoever stopped it; only
	// a Pod stopped for no reason the run has is a Pod failure.
	switch {
	case runstate.CancelRequested(a.Run):
		return Cancelled(a.Run)
	case a.Pod == nil || a.Pod.Status.Phase != corev1.PodFailed:
		// Deleted: only a deadline that has passed stopped it.
		if a.TimedOut() {
			return TimedOut(a.Run, a.Timeout)
		}
	case a.Deadline().StoppedPod(a.Now):
		// The kubelet's count of the deadline may end a few seconds before
		// the controller's.
		return TimedOut(a.Run, a.Timeout)
	}
	return o
}

// Retries reports whether an attempt of run that ended with o is followed by
// another: o is a failure that run retries (PodFailed, StepFailed; never a
// timeout or a cancellation, which are not in retryOn's enum), and run has
// attempts left.
func Retries(run *v1.TaskRun, o *Outcome) bool {
	return o != nil && o.Status == metav1.ConditionFalse &&
		len(run.Status.Attempts)+1 < runstate.AttemptsAllowed(run) &&
		slices.Contains(runstate.RetryOn(run), v1.RetryReason(o.Reason))
}

// RecordAttempt appends the current attempt, which failed with a.Outcome, to
// status.attempts, which makes the next attempt the current one. An
// attempt's start is the run's for the first, and the failure of the one
// before for the others: the reconcile that recorded that failure created
// its Pod. The Pod, steps and results reported are the next attempt's from
// now on, and that Pod is named (ForgetPod), not yet read.
func (a *Attempt) RecordAttempt() {
	st := &a.Run.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: a.StartTime()}
	}
	start := st.StartTime
	if n := len(st.Attempts); n > 0 {
		start = st.Attempts[n-1].CompletionTime
	}
	st.Attempts = append(st.Attempts, v1.Attempt{
		PodName:        a.PodName,
		StartTime:      start.DeepCopy(),
		CompletionTime: &metav1.Time{Time: a.Now.Truncate(time.Second)},
		Reason:         string(a.Outcome.Reason),
		Message:        Truncate(a.Outcome.Message, MaxConditionMessage),
	})
	// status.podName names the current attempt's Pod once it exists: until
	// then, none, rather than the failed attempt's, which attempts lists.
	st.PodName, st.Steps, st.Results = "", nil, nil
	a.Outcome = nil
	a.ForgetPod()
}

// AttemptFailed says how run's attempt i (0 for the first) failed.
func AttemptFailed(run *v1.TaskRun, i int) string {
	at := run.Status.Attempts[i]
	return fmt.Sprintf("attempt %d of %d failed (%s): %s", i+1, runstate.AttemptsAllowed(run), at.Reason, at.Message)
}

// terminating reports whether the current attempt's Pod is being deleted
// on a node whose kubelet is stopping it: it exists, its deletion has begun
// and it has not ended. (A Pod lost with its node waits for a fence
// instead.)
func (a *Attempt) terminating() bool {
	return a.Pod != nil && a.Pod.DeletionTimestamp != nil && !a.Node.Lost() && !ended(a.Pod)
}

// waitForTermination is the outcome of a run whose attempt's Pod is being
// deleted, and that retries that failure (o): Retrying, the message saying
// how the attempt failed and that the next one waits for the Pod to be gone.
func (a *Attempt) waitForTermination(o *Outcome) *Outcome {
	n := len(a.Run.Status.Attempts)
	return Unknown(v1.ReasonRetrying,
		"attempt %d of %d failed (%s): %s; attempt %d's Pod %q is being deleted and its steps may still run: "+
			"waiting for it to be gone before attempt %d",
		n+1, runstate.AttemptsAllowed(a.Run), o.Reason, o.Message, n+1, a.PodName, n+2)
}

// ended reports whether pod's phase is final.
func ended(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
