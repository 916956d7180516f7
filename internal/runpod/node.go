package runpod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/internal/runstate"
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
// (Evicted, DeadlineExceeded, ...) or for a step's container that exited
// non-zero, and the Pod garbage collector sets the phase alone. A native
// sidecar's exit (release 7's, killed once the steps ended, say) fails no
// Pod: the kubelet's phase leaves sidecars out.
func failedUnseen(pod *corev1.Pod) bool {
	if pod.Status.Reason != "" {
		return false
	}
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if cs := statuses[step.Container]; cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
			return false
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
