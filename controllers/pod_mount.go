package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file reads the Events that say a volume the kubelet cannot mount
// holds back a run's Pod (a workspace bound to a ConfigMap, Secret or claim
// that is missing, say): the kubelet reports it only as an Event of the Pod,
// reason FailedMount, whose containers wait meanwhile as if on their way
// (ContainerCreating). What the Pod and its Events say is internal/runpod's
// (runpod.MayBeHeldByMount, runpod.FailedMount).
//
// Events are read from the API server, not cached. The API server keeps no
// watch cache of Events (they are most of its writes): an informer would
// list every Event of the cluster from etcd at the manager's start, and again
// whenever its watch expired, for the few that matter here. A run instead
// lists its own Pod's FailedMount Events (a field selector on the Pod's UID
// and the reason: RBAC list on events, nothing more), and only while the Pod
// may be held by a mount: the kubelet has taken it up and not made its
// sandbox yet (the PodReadyToStartContainers condition, which it reports
// since Kubernetes 1.29, is False; it mounts a Pod's volumes before), and no
// step is past waiting to be made. A Pod that starts normally is so for a
// second or two. Nothing tells the controller when such an Event comes, so
// it looks again a second after the Pod was taken up, then less often the
// longer it waits (half its wait so far, at most 30 s apart); the end of the
// wait changes the Pod's status, and so needs no look.
//
// +kubebuilder:rbac:groups="",resources=events,verbs=list

// mountRecheckMin and mountRecheckMax bound how soon a Pod that may be held
// by a mount is looked at again.
const (
	mountRecheckMin = time.Second
	mountRecheckMax = 30 * time.Second
)

// readFailedMount returns the volume that the kubelet cannot mount for the
// Pod of a run that is Pending, from the Pod's FailedMount Events, or nil.
// While the Pod may be held so, it asks for the run to be looked at again.
// Events that cannot be listed (a manager whose role lacks list on events,
// say) are logged and looked for again: they only add to what the run
// says, and must not keep the rest of its status from being written.
func (r *TaskRunReconciler) readFailedMount(ctx context.Context, s *runScope) *runpod.Hold {
	if !runpod.MayBeHeldByMount(s.pod) {
		return nil
	}
	var events corev1.EventList
	err := r.APIReader.List(ctx, &events, client.InNamespace(s.pod.Namespace),
		client.MatchingFields{"involvedObject.uid": string(s.pod.UID), "reason": runpod.ReasonFailedMount})
	var h *runpod.Hold
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the Events of a Pod that may be held back by a volume", "pod", s.pod.Name, "reason", runpod.ReasonFailedMount)
	} else {
		h = runpod.FailedMount(events.Items)
	}
	if h == nil {
		waited := s.now.Sub(s.pod.Status.StartTime.Time)
		s.recheckWithin(min(max(waited/2, mountRecheckMin), mountRecheckMax))
	}
	return h
}
