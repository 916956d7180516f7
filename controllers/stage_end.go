package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/rundecision"
)

// This file holds the stages that end a run's attempt: when its Pod has
// ended, is gone or is lost (then the run ends, or moves on to its next
// attempt), and when the run is cancelled or times out.

// endOrRetry ends the run when its current attempt's Pod has ended or is
// gone, unless the run retries that failure: then it records the attempt and
// moves on to the next one, whose Pod it finds if a reconcile that crashed
// before recording the attempt created it, and createPod creates otherwise.
// It goes on while the Pod it finds has ended too (the manager was down
// while it ran), at most once per attempt the run allows.
func (r *TaskRunReconciler) endOrRetry(ctx context.Context, s *runScope) error {
	for {
		next, stopPod := s.EndOrRetry()
		if stopPod {
			if err := r.stopPod(ctx, s.Pod, s.Now); err != nil {
				return err
			}
		}
		logger := log.FromContext(ctx).WithValues("attempt", len(s.Run.Status.Attempts)+1, "pod", s.PodName)
		switch next {
		case rundecision.WaitForFence:
			logger.Info("TaskRun attempt lost with its node; waiting for its Pod to be fenced before the next attempt",
				"node", s.Node.Node, "fault", s.Node.Fault)
		case rundecision.WaitForTermination:
			logger.Info("TaskRun attempt's Pod is being deleted; waiting for it to be gone before the next attempt")
		case rundecision.Retry:
			s.RecordAttempt()
			logger.Info("TaskRun attempt failed; retrying", "reason", s.Run.Status.Attempts[len(s.Run.Status.Attempts)-1].Reason)
			if err := r.findPod(ctx, s); err != nil {
				return err
			}
			continue
		}
		return nil
	}
}

// stopIfRequested ends a run that is cancelled or has timed out, and stops its Pod.
func (r *TaskRunReconciler) stopIfRequested(ctx context.Context, s *runScope) error {
	o := s.StopRequested()
	if o == nil {
		return nil
	}
	if s.Pod != nil {
		if err := r.stopPod(ctx, s.Pod, s.Now); err != nil {
			return err
		}
	}
	s.Outcome = o
	return nil
}
