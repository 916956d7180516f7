package runpod

import (
	corev1 "k8s.io/api/core/v1"
)

// This file says which of a run's Pods their node has a say in: a Pod bound
// to a node whose kubelet has not ended it. What the node says is
// internal/nodefault's; what the run does of it, the controller's.

// JudgedByNode returns the node that pod is bound to, and whether that
// node's health decides what became of the Pod: the Pod has not ended by
// its kubelet's word. That is a Pod Pending or Running (being deleted or
// not), whose kubelet may have gone silent, and a Pod failed with no word
// of its kubelet (failedUnseen): the Pod garbage collector fails the Pods of
// a node deleted or out of service before it deletes them. A Pod that
// succeeded, or that its kubelet failed, ended where it ran, and says so
// itself; a Pod on no node has no node to judge it.
func JudgedByNode(pod *corev1.Pod) (string, bool) {
	if pod == nil || pod.Spec.NodeName == "" {
		return "", false
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return "", false
	case corev1.PodFailed:
		if !failedUnseen(pod) {
			return "", false
		}
	}
	return pod.Spec.NodeName, true
}

// failedUnseen reports whether pod, Failed, was failed by the control plane
// rather than its kubelet: a kubelet fails a Pod for a reason of the Pod's
// (Evicted, DeadlineExceeded, ...) or for a container that exited non-zero,
// and the Pod garbage collector sets the phase alone.
func failedUnseen(pod *corev1.Pod) bool {
	if pod.Status.Reason != "" {
		return false
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				return false
			}
		}
	}
	return true
}

// disruption returns pod's DisruptionTarget condition if it holds, nil if
// not: the control plane's word that it is about to delete the Pod, and why.
func disruption(pod *corev1.Pod) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
