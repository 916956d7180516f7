package controllers

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds the reads and writes of a run's Pod that more than one
// stage makes: reading it (or its Node) from the cache or the API server,
// adopting it, and stopping it.

// getFresh reads the object named key into obj from the cache, else, if
// live, from the API server, and reports whether it exists. The cache may
// not hold an object yet (one created a moment ago), or ever (a Pod that has
// ended: runningPods); an object taken for missing ends a run or moves it
// on, so such a read is worth one GET.
func (r *TaskRunReconciler) getFresh(ctx context.Context, key client.ObjectKey, obj client.Object, live bool) (bool, error) {
	err := r.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && live {
		err = r.APIReader.Get(ctx, key, obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// adoptPod gives minitask's labels to a Pod that run owns or names but that
// lacks them (one started by an earlier release, say), and makes run its
// controller if it has none, so that the cache and the Pod watch see it.
func (r *TaskRunReconciler) adoptPod(ctx context.Context, run *v1.TaskRun, pod *corev1.Pod) error {
	base := pod.DeepCopy()
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, runstate.PodLabels(run))
	if metav1.GetControllerOf(pod) == nil {
		if err := controllerutil.SetControllerReference(run, pod, r.Scheme); err != nil {
			return fmt.Errorf("adopting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	if err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adopting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	log.FromContext(ctx).Info("adopted Pod", "pod", pod.Name)
	return nil
}

// stopPod stops the Pod of a run that ended early. A Pod that started a step
// is stopped by lowering its activeDeadlineSeconds: the kubelet kills it and
// its logs stay readable. A Pod that never started has no logs, and is deleted.
func (r *TaskRunReconciler) stopPod(ctx context.Context, pod *corev1.Pod, now time.Time) error {
	logger := log.FromContext(ctx).WithValues("pod", pod.Name)
	if runpod.NeverStarted(pod) {
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		logger.Info("deleted Pod that never started")
		return nil
	}
	deadline := runstate.StoppingDeadlineSeconds(pod.Status.StartTime.Time, now)
	if current := pod.Spec.ActiveDeadlineSeconds; current != nil && *current <= deadline {
		return nil
	}
	base := pod.DeepCopy()
	pod.Spec.ActiveDeadlineSeconds = &deadline
	if err := r.Client.Patch(ctx, pod, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("stopping Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	logger.Info("lowered activeDeadlineSeconds to stop Pod", "activeDeadlineSeconds", deadline)
	return nil
}
