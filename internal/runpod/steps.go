package runpod

import (
	corev1 "k8s.io/api/core/v1"
)

// This file reads the state of a run's Pod's steps from its container
// statuses.

// NeverStarted reports whether no step of pod has started, so that stopping
// it loses no logs: the kubelet has not taken it up, or every container still
// waits (for its image, say).
func NeverStarted(pod *corev1.Pod) bool {
	if pod.Status.StartTime == nil {
		return true
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if cs.State.Running != nil || cs.State.Terminated != nil {
				return false
			}
		}
	}
	return true
}
