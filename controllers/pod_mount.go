package controllers

import (
	"context"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/eventtime"
)

// This file finds a volume the kubelet cannot mount for a run's Pod (a
// workspace bound to a ConfigMap, Secret or claim that is missing, say).
// The kubelet reports it only as an Event of the Pod, reason FailedMount,
// whose containers wait meanwhile as if on their way (ContainerCreating).
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

const (
	// reasonFailedMount is the kubelet's Event reason for a volume it could
	// not mount.
	reasonFailedMount = "FailedMount"

	// mountRecheckMin and mountRecheckMax bound how soon a Pod that may be
	// held by a mount is looked at again.
	mountRecheckMin = time.Second
	mountRecheckMax = 30 * time.Second
)

// mountedVolume and unmountedVolumes find the volume a FailedMount Event
// names: `MountVolume.SetUp failed for volume "ws-src" : configmap "settings"
// not found`, or, when the kubelet gave up waiting for them all, `Unable to
// attach or mount volumes: unmounted volumes=[ws-src], ...`.
var (
	mountedVolume    = regexp.MustCompile(`for volume "([^"]+)"`)
	unmountedVolumes = regexp.MustCompile(`unmounted volumes=\[([^\] ,]+)`)
)

// mayBeHeldByMount reports whether the kubelet may be held back from
// starting pod's first step by a volume it cannot mount.
func mayBeHeldByMount(pod *corev1.Pod) bool {
	if pod.Status.StartTime == nil || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodPending {
		return false
	}
	sandboxNotReady := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers {
			sandboxNotReady = c.Status == corev1.ConditionFalse
		}
	}
	if !sandboxNotReady {
		return false
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if cs.State.Waiting == nil || !benignWaiting[cs.State.Waiting.Reason] {
				return false
			}
		}
	}
	return true
}

// readFailedMount returns the volume that the kubelet cannot mount for the
// Pod of a run that is Pending, from the Pod's FailedMount Events, or nil.
// While the Pod may be held so, it asks for the run to be looked at again.
// Events that cannot be listed (a manager whose role lacks list on events,
// say) are logged and looked for again: they only add to what the run
// says, and must not keep the rest of its status from being written.
func (r *TaskRunReconciler) readFailedMount(ctx context.Context, s *runScope) *hold {
	if !mayBeHeldByMount(s.pod) {
		return nil
	}
	var events corev1.EventList
	err := r.APIReader.List(ctx, &events, client.InNamespace(s.pod.Namespace),
		client.MatchingFields{"involvedObject.uid": string(s.pod.UID), "reason": reasonFailedMount})
	var h *hold
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the Events of a Pod that may be held back by a volume", "pod", s.pod.Name, "reason", reasonFailedMount)
	} else {
		h = failedMount(events.Items)
	}
	if h == nil {
		waited := s.now.Sub(s.pod.Status.StartTime.Time)
		s.recheckWithin(min(max(waited/2, mountRecheckMin), mountRecheckMax))
	}
	return h
}

// failedMount returns the hold of the volume that events, a Pod's
// FailedMount Events, say cannot mount, or nil: the one a latest Event names
// with the kubelet's own error (MountVolume.SetUp failed for volume ...),
// else the one it gave up waiting for first.
func failedMount(events []corev1.Event) *hold {
	var found *corev1.Event
	var volume string
	foundPrecise := false
	for i := range events {
		e := &events[i]
		name, precise := "", false
		if m := mountedVolume.FindStringSubmatch(e.Message); m != nil {
			name, precise = m[1], true
		} else if m := unmountedVolumes.FindStringSubmatch(e.Message); m != nil {
			name = m[1]
		} else {
			continue
		}
		if found == nil || (precise && !foundPrecise) || (precise == foundPrecise && eventtime.LastSeen(e).After(eventtime.LastSeen(found))) {
			found, volume, foundPrecise = e, name, precise
		}
	}
	if found == nil {
		return nil
	}
	return &hold{
		reason: v1beta1.ReasonPodConfigFailed,
		volume: volume,
		why:    corev1.ContainerStateWaiting{Reason: reasonFailedMount, Message: found.Message},
	}
}
