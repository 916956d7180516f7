package controllers

import (
	corev1 "k8s.io/api/core/v1"
)

// trimPod keeps of a cached Pod only what the controller reads: its metadata
// (but managedFields), the names of its containers, activeDeadlineSeconds,
// and the status fields that tell how its steps went. The rest (volumes,
// tolerations, the steps' scripts and environment, conditions, IPs) can be
// most of a Pod's size, and the cache holds every Pod minitask runs, finished
// ones too. The controller changes Pods only with merge patches computed from
// the cached object, which touch only the fields they set, so what is
// trimmed here is never written back.
func trimPod(obj any) (any, error) {
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
			InitContainerStatuses: pod.Status.InitContainerStatuses,
			ContainerStatuses:     pod.Status.ContainerStatuses,
		},
	}
	trimmed.ManagedFields = nil
	return trimmed, nil
}

func containerNames(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	names := make([]corev1.Container, len(containers))
	for i, c := range containers {
		names[i] = corev1.Container{Name: c.Name}
	}
	return names
}
