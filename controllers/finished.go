package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/rundecision"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is what the controller does with a finished run, which it never
// writes again: it stops the Pod of a run that ended while its Pod went on,
// and deletes the run once its time to live has passed: its
// spec.ttlSecondsAfterFinished, else the manager's
// --default-ttl-after-finished, after completionTime. The controller deletes
// what it ran, so that no job outside it has to prune runs.

// stopPodAfterEnd stops the Pod of a run that ended while its Pod went on
// (rundecision.PodOutlivesEnd), if that Pod has not ended: deleted if no
// step started and no sidecar ran, else its deadline lowered (stopPod). A
// run whose steps ended while its sidecars run on is such a run: it ended
// with its last step, whatever the sidecars do. A Pod that failed of
// itself may linger in the cache for a moment, and must not be deleted, nor
// its logs with it. The status write's own watch event brings the finished
// run here; an error retries it. The cache holds only Pods that have not
// ended, so a run whose Pod has ended or gone costs no read.
func (r *TaskRunReconciler) stopPodAfterEnd(ctx context.Context, run *v1.TaskRun) error {
	reason, outlives := rundecision.PodOutlivesEnd(run)
	if !outlives {
		return nil
	}
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("getting Pod %s/%s of TaskRun %s: %w", run.Namespace, run.Status.PodName, run.Name, err)
	case !metav1.IsControlledBy(pod, run) || pod.DeletionTimestamp != nil:
		return nil
	}
	switch reason {
	case v1.ReasonSucceeded, v1.ReasonStepFailed, v1.ReasonStepTimedOut:
		// The run ended with its last step: its Pod goes on only for a
		// step that failed while it runs, or for sidecars that run on,
		// which the kubelet would give their grace period.
		if !runpod.FailedWhileRunning(pod) && !runpod.SidecarsOutliveSteps(pod) {
			return nil
		}
	}
	return r.stopPod(ctx, pod, r.clock())
}

// deleteIfExpired deletes the finished run if its time to live has passed,
// and otherwise asks to see it again when it will have: one timer per run
// with a TTL, not a periodic sweep. A run kept for good is never requeued. A
// run that finished long before the manager started is deleted at once, when
// the manager's first list reconciles it.
//
// The deletion is in the foreground: the API server keeps the run, marked
// for deletion, until the garbage collector has deleted its Pods (every
// attempt's, all owned by the run with blockOwnerDeletion), so that a run
// that is gone has no Pod left behind, and a new run of the same name never
// meets its predecessor's Pod. Its preconditions, the UID and resourceVersion
// read, make sure that the object deleted is the one judged expired: never a
// new run of the same name, nor one changed since the cache saw it.
func (r *TaskRunReconciler) deleteIfExpired(ctx context.Context, run *v1.TaskRun) (ctrl.Result, error) {
	expires, ok := runstate.ExpiresAt(run, r.DefaultTTLAfterFinished)
	if !ok {
		return ctrl.Result{}, nil
	}
	if left := expires.Sub(r.clock()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	err := r.Client.Delete(ctx, run,
		client.Preconditions{UID: &run.UID, ResourceVersion: &run.ResourceVersion},
		client.PropagationPolicy(metav1.DeletePropagationForeground))
	logger := log.FromContext(ctx)
	switch {
	case err == nil:
		runsDeleted.Inc()
		logger.Info("deleted TaskRun whose time to live after finishing has passed", "expired", expires.UTC().Format("2006-01-02T15:04:05Z"))
		return ctrl.Result{}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		// The run changed since the cache read it: the change's watch event
		// reconciles it again, and it is judged anew.
		logger.V(1).Info("TaskRun changed since it was read; not deleting it yet", "error", err.Error())
		return ctrl.Result{}, nil
	default:
		return ctrl.Result{}, fmt.Errorf("deleting expired TaskRun %s/%s: %w", run.Namespace, run.Name, err)
	}
}
