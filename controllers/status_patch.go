package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// patchStatus writes the run's status with a merge patch against the run as
// read, if it changed. The patch carries the resourceVersion read: a run
// changed since (by a v1alpha1 client, say) makes it fail rather than apply a
// transition twice, so that each Event and metric is recorded once. The
// change that caused the conflict arrives as a watch event and reconciles
// the run again.
func (r *TaskRunReconciler) patchStatus(ctx context.Context, s *runScope) error {
	if equality.Semantic.DeepEqual(s.original.Status, s.Run.Status) {
		return nil
	}
	patch := client.MergeFromWithOptions(s.original, client.MergeFromWithOptimisticLock{})
	err := r.Client.Status().Patch(ctx, s.Run, patch)
	switch {
	case err == nil:
		s.written = true
		r.writes.wrote(s.Run)
		return nil
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		log.FromContext(ctx).V(1).Info("TaskRun changed since it was read; reconciling it again", "error", err.Error())
		return nil
	default:
		return fmt.Errorf("patching status of TaskRun %s/%s: %w", s.Run.Namespace, s.Run.Name, err)
	}
}
