package runlogs

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file reads a run that retries attempt by attempt. Each attempt runs
// the steps again in a Pod of its own (RUN-pod, then RUN-pod-retryN), and
// status.podName moves on to the next attempt's Pod: a Source that looked
// the Pod up afresh for each step would read the first steps of one attempt
// and the later steps of the next, and would stop following when an
// attempt's Pod failed though the run goes on.

var _ Attempts = (*PodSource)(nil)

// NextAttempt moves the source onto the attempt to read: at the first call,
// the run's current attempt; then, with follow, the one after the attempt
// read, once the run has begun it, or none once the run has finished without
// it (or been deleted), or at once if the run may make no more attempts.
func (s *PodSource) NextAttempt(ctx context.Context, follow bool) (string, bool, error) {
	if !s.pinned {
		run, err := s.getRun(ctx)
		if err != nil {
			return "", false, err
		}
		s.attempt, s.pinned = len(run.Status.Attempts), true
		return attemptMark(run, s.attempt), true, nil
	}
	if !follow {
		return "", false, nil
	}
	var run *v1.TaskRun
	err := wait.PollUntilContextCancel(ctx, s.PollInterval, true, func(ctx context.Context) (bool, error) {
		var err error
		run, err = s.getRun(ctx)
		switch {
		case apierrors.IsNotFound(err):
			// Deleted, as a run whose TTL after finishing is 0 is:
			// there is nothing more to read.
			return true, nil
		case err != nil:
			return false, err
		}
		// The last attempt the run may make has nothing after it: done as
		// a run that does not retry always was, once its steps were read.
		last := s.attempt+1 >= runstate.AttemptsAllowed(run)
		return len(run.Status.Attempts) > s.attempt || runstate.Finished(run) || last, nil
	})
	if err != nil || run == nil || len(run.Status.Attempts) <= s.attempt {
		return "", false, err
	}
	s.attempt++
	return attemptMark(run, s.attempt), true, nil
}

// attemptOf is the attempt being read: the one NextAttempt moved to, else
// the run's current one.
func (s *PodSource) attemptOf(run *v1.TaskRun) int {
	if s.pinned {
		return s.attempt
	}
	return len(run.Status.Attempts)
}

// attemptPod names the Pod of run's attempt, as the run's status records
// it: status.attempts for an earlier attempt, status.podName for the
// current one; "" while the current one has no Pod yet.
func attemptPod(run *v1.TaskRun, attempt int) string {
	if attempt < len(run.Status.Attempts) {
		return run.Status.Attempts[attempt].PodName
	}
	return run.Status.PodName
}

// attemptMark is the line that marks the start of run's attempt, and after
// the first, says how the one before failed; none for a run that does not
// retry.
func attemptMark(run *v1.TaskRun, attempt int) string {
	done, allowed := run.Status.Attempts, runstate.AttemptsAllowed(run)
	if allowed == 1 && len(done) == 0 {
		return ""
	}
	mark := fmt.Sprintf("=== attempt %d of %d", attempt+1, max(allowed, len(done)+1))
	if attempt == 0 {
		return mark
	}
	failed := done[attempt-1]
	return fmt.Sprintf("%s, after attempt %d failed (%s): %s", mark, attempt, failed.Reason, strings.Join(strings.Fields(failed.Message), " "))
}
