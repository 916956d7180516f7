package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file ends a run whose Pod the kubelet holds back for longer than the
// manager allows: a step's image it fails to pull (--image-pull-timeout, then
// ImagePullFailed), or a step it cannot make or a volume it cannot mount for
// the Pod's configuration (--pod-config-timeout, then PodConfigFailed),
// instead of letting the run wait until its own timeout (an hour by default)
// with no more than a Pending message. Both are one wait: what holds the Pod
// back (a runpod.Hold, read from the Pod), since when, for how long it may:
// the last two are decided here.

// DefaultImagePullTimeout is the default of --image-pull-timeout: long enough
// for a large image on a slow registry, or a registry's brief outage (the
// kubelet retries a pull with a backoff of up to 5 minutes), short against
// the default run timeout of an hour.
const DefaultImagePullTimeout = 5 * time.Minute

// DefaultPodConfigTimeout is the default of --pod-config-timeout: time to
// create the ConfigMap, Secret or claim a run was started before, once its
// Pending message names it, and for the kubelet to see it (it mounts again
// with a backoff of up to about 2 minutes, and makes a container again
// sooner); short against the default run timeout of an hour.
const DefaultPodConfigTimeout = 2 * time.Minute

// heldTimeout is how long a hold ending a run with reason may last.
func (r *TaskRunReconciler) heldTimeout(reason v1.TaskRunReason) time.Duration {
	if reason == v1.ReasonImagePullFailed {
		return r.ImagePullTimeout
	}
	return r.PodConfigTimeout
}

// failIfHeld ends the run when the kubelet has held its Pod back for longer
// than the manager allows (heldTimeout: 0 means no limit but the run's
// timeout). Before that, it asks for the run to be reconciled again when the
// timeout would pass: the Pod's status may not change meanwhile. A volume
// that cannot mount is looked for only while no step has started
// (readFailedMount), and the Pending message names it. Neither end is
// retried, whatever retryOn says: the next attempt would meet the same
// registry or configuration, and spend as long again before failing.
//
// The Pod is stopped only once the run's status says so (stopPodAfterEnd),
// not before, as a cancel's or a timeout's is: the hold, in the Pod's
// status, is the only evidence of this outcome. A Pod stopped before a
// status write that did not land (a conflict, a crash) would leave the next
// reconcile a deleted or Failed Pod, and a PodFailed that retryOn retries.
func (r *TaskRunReconciler) failIfHeld(ctx context.Context, s *runScope) error {
	if s.pod == nil {
		return nil
	}
	h := runpod.FindHeldStep(s.pod)
	if h == nil {
		if h = r.readFailedMount(ctx, s); h == nil {
			return nil
		}
		s.mountHeld = h
	}
	timeout := r.heldTimeout(h.Reason)
	if timeout <= 0 {
		return nil
	}
	since := r.heldSince(ctx, s, h)
	if left := since.Add(timeout).Sub(s.now); left > 0 {
		s.recheckWithin(left)
		return nil
	}
	log.FromContext(ctx).Info("Pod held back too long", "reason", h.Reason, "held", h.Subject(), "image", h.Image,
		"kubeletReason", h.Why.Reason, "kubeletMessage", h.Why.Message, "since", since)
	s.outcome = fromPod(h.Outcome(timeout))
	return nil
}

// stopsPodAfterEnd are the reasons of a run that ends while its Pod goes on,
// for the controller to stop once the status says so (stopPodAfterEnd).
var stopsPodAfterEnd = map[v1.TaskRunReason]bool{
	v1.ReasonImagePullFailed: true,
	v1.ReasonPodConfigFailed: true,
	v1.ReasonStepFailed:      true,
	v1.ReasonPendingTimeout:  true,
}

// stopPodAfterEnd stops the Pod of a run that ended while its Pod went on,
// if that Pod has not ended: deleted if no step started, else its deadline
// lowered (stopPod). Those are the runs that ended ImagePullFailed or
// PodConfigFailed (failIfHeld), and those that ended StepFailed for a step
// that cannot start or a chained step that failed (runpod.Outcome), whose
// Pod still shows it: a Pod that
// failed of itself may linger in the cache for a moment, and must not be
// deleted, nor its logs with it. The status write's own watch event brings
// the finished run here; an error retries it. The cache holds only Pods that
// have not ended, so a run whose Pod has ended or gone costs no read.
func (r *TaskRunReconciler) stopPodAfterEnd(ctx context.Context, run *v1.TaskRun) error {
	ended := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionSucceeded)
	if ended == nil || run.Status.PodName == "" || !stopsPodAfterEnd[v1.TaskRunReason(ended.Reason)] {
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
	if ended.Reason == string(v1.ReasonStepFailed) && !runpod.FailedWhileRunning(pod) {
		return nil
	}
	return r.stopPod(ctx, pod, r.clock())
}
