package runcache

import (
	corev1 "k8s.io/api/core/v1"
)

// TrimPod keeps of a cached Pod only what the controller reads: its metadata
// (but managedFields), the names, images and restartPolicy of its containers
// (an ImagePullFailed message names the image; an init container's
// restartPolicy Always makes it a native sidecar, not a step:
// runstate.IsNativeSidecar), a native sidecar's probes (which say what it
// waits for: runpod.HeldBySidecar), activeDeadlineSeconds,
// each container's name and state (waiting, running or terminated, with
// their reasons, messages, exit codes and times), whether it started and is
// ready, its restarts and the exit code and reason of its last termination
// (status.sidecars, and a sidecar's restart Event), the PodScheduled
// condition, whose message says why a Pending Pod is not scheduled, and the
// PodReadyToStartContainers condition, which says whether its volumes may
// still hold it back (runpod.MayBeHeldByMount). The rest
// (volumes, tolerations, the steps' scripts, environment and resources, the
// images, IDs, mounts and resources the kubelet reports for each container,
// the other conditions, IPs) can be most of a Pod's size, and the cache holds
// every Pod of a run that goes on. The controller changes Pods only with
// merge patches computed from the cached object, which touch only the fields
// they set, so what is trimmed here is never written back.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: pod.ObjectMeta,
		Spec: corev1.PodSpec{
			InitContainers:        containerNames(pod.Spec.InitContainers),
			Containers:            containerNames(pod.Spec.Containers),
			ActiveDeadlineSeconds: pod.Spec.ActiveDeadlineSeconds,
			RestartPolicy:         pod.Spec.RestartPolicy,
			NodeName:              pod.Spec.NodeName,
		},
		Status: corev1.PodStatus{
			Phase:                 pod.Status.Phase,
			Reason:                pod.Status.Reason,
			Message:               pod.Status.Message,
			StartTime:             pod.Status.StartTime,
			InitContainerStatuses: containerStates(pod.Status.InitContainerStatuses),
			ContainerStatuses:     containerStates(pod.Status.ContainerStatuses),
			Conditions:            keptConditions(pod.Status.Conditions),
		},
	}
	trimmed.ManagedFields = nil
	return trimmed, nil
}

// containerNames keeps of each container its name, image and restartPolicy.
func containerNames(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	names := make([]corev1.Container, len(containers))
	for i, c := range containers {
		names[i] = corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			names[i].ReadinessProbe, names[i].StartupProbe = c.ReadinessProbe, c.StartupProbe
		}
	}
	return names
}

// keptConditions returns the PodScheduled and PodReadyToStartContainers
// conditions of conditions, in their order, nil for neither: their type,
// status, reason and message, which are what the controller reads (an
// Unschedulable Pod's message says which nodes were tried and why none fits,
// and the run's Pending message repeats it). Their times are left out.
func keptConditions(conditions []corev1.PodCondition) []corev1.PodCondition {
	var kept []corev1.PodCondition
	for _, c := range conditions {
		if c.Type == corev1.PodScheduled || c.Type == corev1.PodReadyToStartContainers {
			kept = append(kept, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return kept
}

// containerStates returns each container's name, state, readiness and
// restarts from statuses, and of its last termination the exit code and
// reason.
func containerStates(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if statuses == nil {
		return nil
	}
	states := make([]corev1.ContainerStatus, len(statuses))
	for i, cs := range statuses {
		states[i] = corev1.ContainerStatus{Name: cs.Name, State: cs.State, Ready: cs.Ready, Started: cs.Started, RestartCount: cs.RestartCount}
		if last := cs.LastTerminationState.Terminated; last != nil {
			states[i].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: last.ExitCode, Reason: last.Reason}
		}
	}
	return states
}
