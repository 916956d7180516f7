package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/rundecision"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file is the stage that ends a run whose Pod the kubelet holds back
// for longer than the manager allows (--image-pull-timeout,
// --pod-config-timeout): it reads what holds the Pod back (its status, or
// its FailedMount Events), records on the Pod since when, and asks
// rundecision whether the wait has lasted too long.
//
// Events are read from the API server, not cached. The API server keeps no
// watch cache of Events (they are most of its writes): an informer would
// list every Event of the cluster from etcd at the manager's start, and again
// whenever its watch expired, for the few that matter here. A run instead
// lists its own Pod's FailedMount Events (a field selector on the Pod's UID
// and the reason: RBAC list on events, nothing more), and only while the Pod
// may be held by a mount (rundecision's MayBeHeldByMount): the kubelet has
// taken it up and not made its sandbox yet, and no step is past waiting to
// be made. A Pod that starts normally is so for a second or two.
//
// +kubebuilder:rbac:groups="",resources=events,verbs=list

// failIfHeld ends the run when the kubelet has held its Pod back for longer
// than the manager allows (0 means no limit but the run's timeout). The Pod
// is stopped only once the run's status says so (stopPodAfterEnd).
func (r *TaskRunReconciler) failIfHeld(ctx context.Context, s *runScope) error {
	if s.Pod == nil {
		return nil
	}
	h := runpod.FindHeldStep(s.Pod)
	if h == nil {
		if h = r.readFailedMount(ctx, s); h == nil {
			return nil
		}
		s.MountHeld = h
	}
	timeout := r.heldTimeouts().For(h.Reason)
	if timeout <= 0 {
		return nil
	}
	since := r.heldSince(ctx, s, h)
	if s.Outcome = s.Held(h, since, timeout); s.Outcome != nil {
		log.FromContext(ctx).Info("Pod held back too long", "reason", h.Reason, "held", h.Subject(), "image", h.Image,
			"kubeletReason", h.Why.Reason, "kubeletMessage", h.Why.Message, "since", since)
	}
	return nil
}

// readFailedMount returns the volume that the kubelet cannot mount for the
// Pod of a run that is Pending, from the Pod's FailedMount Events, or nil.
// Events that cannot be listed (a manager whose role lacks list on events,
// say) are logged and looked for again: they only add to what the run
// says, and must not keep the rest of its status from being written.
func (r *TaskRunReconciler) readFailedMount(ctx context.Context, s *runScope) *runpod.Hold {
	if !s.MayBeHeldByMount() {
		return nil
	}
	var events corev1.EventList
	err := r.APIReader.List(ctx, &events, client.InNamespace(s.Pod.Namespace),
		client.MatchingFields{"involvedObject.uid": string(s.Pod.UID), "reason": runpod.ReasonFailedMount})
	var h *runpod.Hold
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the Events of a Pod that may be held back by a volume", "pod", s.Pod.Name, "reason", runpod.ReasonFailedMount)
	} else {
		h = runpod.FailedMount(events.Items)
	}
	if h == nil {
		s.MountNotHeldYet()
	}
	return h
}

// heldSince returns when h began to hold the Pod back (rundecision's
// HeldSince), and records it on the Pod when that is now, so that
// --pod-config-timeout counts from then whatever becomes of the manager. The
// patch is locked to the Pod as read: a cache that has not caught up with an
// earlier record, or another write, makes it conflict, and the Pod's watch
// event brings the next reconcile, which reads the record. A record that
// cannot be written (a webhook that refuses Pod updates, say) is logged, and
// the wait starts again at the next look: the run then waits for its own
// timeout rather than fail early, and its status is written all the same.
func (r *TaskRunReconciler) heldSince(ctx context.Context, s *runScope, h *runpod.Hold) time.Time {
	since, record := s.HeldSince(h)
	if record == "" {
		return since
	}
	base := s.Pod.DeepCopy()
	if s.Pod.Annotations == nil {
		s.Pod.Annotations = map[string]string{}
	}
	s.Pod.Annotations[rundecision.AnnotationHeldSince] = record
	err := r.Client.Patch(ctx, s.Pod, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	logger := log.FromContext(ctx).WithValues("pod", s.Pod.Name, "held", h.Subject())
	switch {
	case err == nil:
		logger.Info("Pod held back for its configuration", "kubeletReason", h.Why.Reason, "kubeletMessage", h.Why.Message)
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		logger.V(1).Info("Pod changed since it was read; its next reconcile records the hold", "error", err.Error())
	default:
		logger.Error(err, "recording on the Pod when it was first held back; the wait starts again at the next look")
	}
	return since
}
