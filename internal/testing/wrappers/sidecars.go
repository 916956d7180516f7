package wrappers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file builds Tasks with sidecars, and Pods of their shape: a Task's
// sidecars run as native sidecars, init containers with restartPolicy
// Always put before the steps, in either Pod shape (runstate.Sidecars).

// Sidecars adds sidecars to the Task.
func (w *TaskWrapper) Sidecars(sidecars ...v1.Sidecar) *TaskWrapper {
	w.Spec.Sidecars = append(w.Spec.Sidecars, sidecars...)
	return w
}

// WithSidecars returns a copy of pod with a native sidecar for each of names
// first among its init containers, as runpod.Build places them: container
// sidecar-NAME, image NAME-image, restartPolicy Always.
func WithSidecars(pod *corev1.Pod, names ...string) *corev1.Pod {
	pod = pod.DeepCopy()
	always := corev1.ContainerRestartPolicyAlways
	sidecars := make([]corev1.Container, 0, len(names)+len(pod.Spec.InitContainers))
	for _, name := range names {
		sidecars = append(sidecars, corev1.Container{
			Name: runstate.SidecarContainerPrefix + name, Image: name + "-image", RestartPolicy: &always,
		})
	}
	pod.Spec.InitContainers = append(sidecars, pod.Spec.InitContainers...)
	return pod
}

// SidecarRunning reports sidecar name running, since the time At set,
// started and ready, as the kubelet reports a sidecar whose probes passed
// (or that has none).
func (w *PodStatusWrapper) SidecarRunning(name string) *PodStatusWrapper {
	w.sidecarState(name, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: w.at}})
	return w.sidecarStatus(name, func(cs *corev1.ContainerStatus) { cs.Started, cs.Ready = ptr.To(true), true })
}

// SidecarNotReady reports sidecar name running, since the time At set, but
// not ready: not started either, unless started (its startupProbe passed,
// its readinessProbe not yet).
func (w *PodStatusWrapper) SidecarNotReady(name string, started bool) *PodStatusWrapper {
	w.sidecarState(name, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: w.at}})
	return w.sidecarStatus(name, func(cs *corev1.ContainerStatus) { cs.Started, cs.Ready = ptr.To(started), false })
}

// SidecarRestarted reports that the kubelet restarted sidecar name, restarts
// times in all, the last time after it exited with code.
func (w *PodStatusWrapper) SidecarRestarted(name string, restarts, code int32) *PodStatusWrapper {
	return w.sidecarStatus(name, func(cs *corev1.ContainerStatus) {
		cs.RestartCount = restarts
		cs.LastTerminationState = w.terminated(code, "Error")
	})
}

// SidecarEnded reports sidecar name ended with code and reason: killed
// (137, 143) once the steps have ended, say.
func (w *PodStatusWrapper) SidecarEnded(name string, code int32, reason string) *PodStatusWrapper {
	return w.sidecarState(name, w.terminated(code, reason))
}

// SidecarWaiting reports sidecar name waiting with reason and message: an
// image the kubelet cannot pull, say.
func (w *PodStatusWrapper) SidecarWaiting(name, reason, message string) *PodStatusWrapper {
	return w.sidecarState(name, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
}

// sidecarState sets sidecar name's state, neither started nor ready.
func (w *PodStatusWrapper) sidecarState(name string, state corev1.ContainerState) *PodStatusWrapper {
	return w.sidecarStatus(name, func(cs *corev1.ContainerStatus) { cs.State, cs.Started, cs.Ready = state, ptr.To(false), false })
}

// sidecarStatus changes sidecar name's status. A Pod without that sidecar
// is a mistake of the test, and panics.
func (w *PodStatusWrapper) sidecarStatus(name string, change func(*corev1.ContainerStatus)) *PodStatusWrapper {
	container := runstate.SidecarContainer(name)
	for k := range w.status.InitContainerStatuses {
		if cs := &w.status.InitContainerStatuses[k]; cs.Name == container && w.sidecar(container) {
			change(cs)
			return w
		}
	}
	panic(fmt.Sprintf("Pod %s has no sidecar %q", w.pod.Name, name))
}
