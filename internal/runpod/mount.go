package runpod

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/eventtime"
)

// This file finds a volume the kubelet cannot mount for a run's Pod (a
// workspace bound to a ConfigMap, Secret or claim that is missing, say).
// The kubelet reports it only as an Event of the Pod, reason FailedMount,
// whose containers wait meanwhile as if on their way (ContainerCreating):
// MayBeHeldByMount says when such Events are worth reading, FailedMount what
// they say. Reading them, and when to look again, is the controller's.

// ReasonFailedMount is the kubelet's Event reason for a volume it could not
// mount.
const ReasonFailedMount = "FailedMount"

// mountedVolume and unmountedVolumes find the volume a FailedMount Event
// names: `MountVolume.SetUp failed for volume "ws-src" : configmap "settings"
// not found`, or, when the kubelet gave up waiting for them all, `Unable to
// attach or mount volumes: unmounted volumes=[ws-src], ...`.
var (
	mountedVolume    = regexp.MustCompile(`for volume "([^"]+)"`)
	unmountedVolumes = regexp.MustCompile(`unmounted volumes=\[([^\] ,]+)`)
)

// MayBeHeldByMount reports whether the kubelet may be held back from
// starting pod's first step by a volume it cannot mount: it has taken the
// Pod up and not made its sandbox yet (the PodReadyToStartContainers
// condition, which it reports since Kubernetes 1.29, is False; it mounts a
// Pod's volumes before), and no container is past waiting to be made. A
// native sidecar (release 7's) counts here as a step does: one that is
// past it proves the volumes mounted as well.
func MayBeHeldByMount(pod *corev1.Pod) bool {
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

// FailedMount returns the hold of the volume that events, a Pod's
// FailedMount Events, say cannot mount, or nil: the one a latest Event names
// with the kubelet's own error (MountVolume.SetUp failed for volume ...),
// else the one it gave up waiting for first.
func FailedMount(events []corev1.Event) *Hold {
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
	return &Hold{
		Reason: v1.ReasonPodConfigFailed,
		Volume: volume,
		Why:    corev1.ContainerStateWaiting{Reason: ReasonFailedMount, Message: found.Message},
	}
}
