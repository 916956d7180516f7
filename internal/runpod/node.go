package runpod

import (
	corev1 "k8s.io/api/core/v1"
)

// This file says which of a run's Pods their node has a say in: a Pod bound
// to a node whose kubelet has not ended it. What the node says is
// internal/nodefault's; what the run does of it, the controller's.

// reasonDeletionByPodGC is the reason of the DisruptionTarget condition that
// the Pod garbage collector gives a Pod it fails, then deletes, because the
// Pod's node is gone (or, for a Pod being deleted, out of service): no
// kubelet saw that Pod end.
const reasonDeletionByPodGC = "DeletionByPodGC"

// JudgedByNode returns the node that pod is bound to, and whether that
// node's health decides what became of the Pod: the Pod has not ended by
// its kubelet's word. That is a Pod Pending or Running (being deleted or
// not), whose kubelet may have gone silent, and a Pod the Pod garbage
// collector failed (reasonDeletionByPodGC), whose steps no kubelet saw end.
// A Pod that succeeded, or that its kubelet failed, ended where it ran, and
// says so itself; a Pod on no node has no node to judge it.
func JudgedByNode(pod *corev1.Pod) (string, bool) {
	if pod == nil || pod.Spec.NodeName == "" {
		return "", false
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return "", false
	case corev1.PodFailed:
		if c := disruption(pod); c == nil || c.Reason != reasonDeletionByPodGC {
			return "", false
		}
	}
	return pod.Spec.NodeName, true
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
