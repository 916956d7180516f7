package runpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file says what holds back a Pod that has not started a step: the
// scheduler's reason, or the kubelet's for the first step that waits or for
// a volume it cannot mount (mount.go); and what holds back a later step whose
// turn has come (Progress). A run whose PersistentVolumeClaim, ConfigMap or
// Secret is missing stays Pending, and this is where its message comes from.

// benignWaiting are the waiting reasons of a step that is merely on its way:
// its image is being pulled or its container made, or a step before it runs.
var benignWaiting = map[string]bool{
	"":                  true,
	"ContainerCreating": true,
	"PodInitializing":   true,
}

// pendingMessage says why pod has not started a step yet: the PodScheduled
// condition's message while the scheduler cannot place it, else the first
// step that waits for a reason other than being on its way, with the
// kubelet's reason and message, else a sidecar that holds the steps back for
// a reason of its own (HeldBySidecar: its image, its exit, its probe; the
// pending timeout then ends the run SidecarFailed), else mount, a volume the
// kubelet cannot mount (FailedMount), else that no step has started.
func pendingMessage(pod *corev1.Pod, mount *Hold) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("Pod %q cannot be scheduled: %s", pod.Name, c.Message)
		}
	}
	if step, waiting := firstHeldStep(pod); waiting != nil {
		return fmt.Sprintf("step %q: %s", step, heldBecause(waiting))
	}
	if h := HeldBySidecar(pod); h != nil {
		return fmt.Sprintf("sidecar %q: %s", h.Sidecar, h.Why)
	}
	if mount != nil {
		return fmt.Sprintf("%s: %s", mount.Subject(), heldBecause(&mount.Why))
	}
	return fmt.Sprintf("Pod %q has not started a step yet", pod.Name)
}

// heldBecause is the kubelet's reason a step waits, and its message if any.
func heldBecause(waiting *corev1.ContainerStateWaiting) string {
	if waiting.Message == "" {
		return waiting.Reason
	}
	return waiting.Reason + ": " + waiting.Message
}

// firstHeldStep returns, in the order the steps run, the first step whose
// container waits for a reason that is not benign, and its waiting state.
func firstHeldStep(pod *corev1.Pod) (string, *corev1.ContainerStateWaiting) {
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if cs := statuses[step.Container]; cs != nil {
			if w := cs.State.Waiting; w != nil && !benignWaiting[w.Reason] {
				return step.Name, w
			}
		}
	}
	return "", nil
}
