package controllers

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is retries: a run whose attempt failed for a reason in its
// spec.retryOn, with attempts left, gets a new Pod. The state lives in the
// run's status alone, so that every reconcile, from whatever status it reads,
// takes the same next step: len(status.attempts) is the current attempt, and
// its Pod's name is derived from that number (currentPodName). A reconcile
// that records a failed attempt also creates the next attempt's Pod, before
// its status patch; one that crashed in between is followed by one that reads
// the same status, records the same attempt again, and finds that Pod by its
// name. So an attempt never gets two Pods, and none is skipped.

// retries reports whether an attempt of run that ended with o is followed by
// another: o is a failure that run retries (PodFailed, StepFailed; never a
// timeout or a cancellation, which are not in retryOn's enum), and run has
// attempts left.
func retries(run *v1.TaskRun, o *outcome) bool {
	return o != nil && o.status == metav1.ConditionFalse &&
		len(run.Status.Attempts)+1 < runstate.AttemptsAllowed(run) &&
		slices.Contains(runstate.RetryOn(run), v1.RetryReason(o.reason))
}

// endOrRetry ends the run when its current attempt's Pod has ended or is
// gone, unless the run retries that failure: then it records the attempt and
// moves on to the next one, whose Pod it finds if a reconcile that crashed
// before recording the attempt created it, and createPod creates otherwise.
// It goes on while the Pod it finds has ended too (the manager was down
// while it ran), at most once per attempt the run allows.
func (r *TaskRunReconciler) endOrRetry(ctx context.Context, s *runScope) error {
	for {
		if err := finishIfPodEnded(ctx, s); err != nil {
			return err
		}
		// A run cancelled or timed out is not retried: the failure stands,
		// as a Pod's outcome does once it has ended.
		if !retries(s.run, s.outcome) || runstate.CancelRequested(s.run) || s.timedOut() {
			return r.stopPodOnLostNode(ctx, s)
		}
		if s.node.Lost() && !s.node.Fenced {
			// The lost Pod may still run: the next attempt's would run
			// beside it. The run waits, its Pod left to the taint
			// manager's eviction, for the Pod to be fenced or gone; the
			// Node's or the Pod's watch event brings it back.
			s.outcome, s.waitsForFence = s.waitForFence(s.outcome), true
			log.FromContext(ctx).Info("TaskRun attempt lost with its node; waiting for its Pod to be fenced before the next attempt",
				"attempt", len(s.run.Status.Attempts)+1, "pod", s.podName, "node", s.node.Node, "fault", s.node.Fault)
			return nil
		}
		if s.terminating() {
			// Deleted, but its kubelet has yet to stop its containers
			// (their grace period, a trap): the next attempt's steps
			// would run beside them. The Pod's deletion brings the run
			// back.
			s.outcome = s.waitForTermination(s.outcome)
			log.FromContext(ctx).Info("TaskRun attempt's Pod is being deleted; waiting for it to be gone before the next attempt",
				"attempt", len(s.run.Status.Attempts)+1, "pod", s.podName)
			return nil
		}
		if err := r.stopAttemptPod(ctx, s); err != nil {
			return err
		}
		s.recordAttempt()
		log.FromContext(ctx).Info("TaskRun attempt failed; retrying", "attempt", len(s.run.Status.Attempts),
			"reason", s.run.Status.Attempts[len(s.run.Status.Attempts)-1].Reason, "pod", s.podName)
		if err := r.findPod(ctx, s); err != nil {
			return err
		}
	}
}

// stopAttemptPod stops the failed attempt's Pod if it still runs, as a
// timeout does, so that two attempts never run at once; it is kept, for its
// logs. A Pod that ended, or is being deleted, needs nothing.
func (r *TaskRunReconciler) stopAttemptPod(ctx context.Context, s *runScope) error {
	pod := s.pod
	if pod == nil || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	return r.stopPod(ctx, pod, s.now)
}

// recordAttempt appends the current attempt, which failed with s.outcome, to
// status.attempts, which makes the next attempt the current one. An
// attempt's start is the run's for the first, and the failure of the one
// before for the others: the reconcile that recorded that failure created
// its Pod. The Pod, steps and results reported are the next attempt's from
// now on.
func (s *runScope) recordAttempt() {
	st := &s.run.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: s.startTime()}
	}
	start := st.StartTime
	if n := len(st.Attempts); n > 0 {
		start = st.Attempts[n-1].CompletionTime
	}
	st.Attempts = append(st.Attempts, v1.Attempt{
		PodName:        s.podName,
		StartTime:      start.DeepCopy(),
		CompletionTime: &metav1.Time{Time: s.now.Truncate(time.Second)},
		Reason:         string(s.outcome.reason),
		Message:        truncate(s.outcome.message, maxConditionMessage),
	})
	// status.podName names the current attempt's Pod once it exists: until
	// then, none, rather than the failed attempt's, which attempts lists.
	st.PodName, st.Steps, st.Results = "", nil, nil
	s.outcome, s.pod, s.otherPod = nil, nil, nil
}

// retryingWhilePending reports a run whose current attempt is a retry, and
// has not started a step yet, as Unknown/Retrying rather than Pending, saying
// which attempt failed, why, and what the new one waits for.
func retryingWhilePending(run *v1.TaskRun, o *outcome) *outcome {
	n := len(run.Status.Attempts)
	if n == 0 || o == nil || o.status != metav1.ConditionUnknown || o.reason != v1.ReasonPending {
		return o
	}
	return unknown(v1.ReasonRetrying, "%s; attempt %d: %s", attemptFailed(run, n-1), n+1, o.message)
}

// attemptFailed says how run's attempt i (0 for the first) failed.
func attemptFailed(run *v1.TaskRun, i int) string {
	a := run.Status.Attempts[i]
	return fmt.Sprintf("attempt %d of %d failed (%s): %s", i+1, runstate.AttemptsAllowed(run), a.Reason, a.Message)
}

// terminating reports whether the current attempt's Pod is being deleted
// on a node whose kubelet is stopping it: it exists, its deletion has begun
// and it has not ended. (A Pod lost with its node waits for a fence
// instead.)
func (s *runScope) terminating() bool {
	pod := s.pod
	return pod != nil && pod.DeletionTimestamp != nil && !s.node.Lost() &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// waitForTermination is the outcome of a run whose attempt's Pod is being
// deleted, and that retries that failure (o): Retrying, the message saying
// how the attempt failed and that the next one waits for the Pod to be gone.
func (s *runScope) waitForTermination(o *outcome) *outcome {
	n := len(s.run.Status.Attempts)
	return unknown(v1.ReasonRetrying,
		"attempt %d of %d failed (%s): %s; attempt %d's Pod %q is being deleted and its steps may still run: "+
			"waiting for it to be gone before attempt %d",
		n+1, runstate.AttemptsAllowed(s.run), o.reason, o.message, n+1, s.podName, n+2)
}
