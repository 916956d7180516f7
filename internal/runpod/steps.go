package runpod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file reads a run's Pod's steps from its container statuses: the
// run's status.steps, and whether any step has started.

// StepStates reports pod's steps in order, from its container statuses: the
// init containers, then the container. A script step that onError: continue
// let pass reports its script's own exit code (results.go), and a step that
// cannot start for good is Terminated (start_failure.go).
func StepStates(pod *corev1.Pod) []v1.StepState {
	statuses := containerStatuses(pod)
	containers := runstate.Steps(pod)
	steps := make([]v1.StepState, len(containers))
	for i, c := range containers {
		steps[i] = stepState(c.Name, statuses[c.Container])
	}
	applyScriptExitCodes(steps, pod)
	describeStartFailures(steps, pod)
	return steps
}

// containerStatuses returns the status of each of pod's containers, init
// containers and the container alike, by container name.
func containerStatuses(pod *corev1.Pod) map[string]*corev1.ContainerStatus {
	statuses := make(map[string]*corev1.ContainerStatus, len(pod.Status.InitContainerStatuses)+len(pod.Status.ContainerStatuses))
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			statuses[list[i].Name] = &list[i]
		}
	}
	return statuses
}

// stepState reports one step from its container's status, nil before the
// kubelet has reported any.
func stepState(name string, cs *corev1.ContainerStatus) v1.StepState {
	step := v1.StepState{Name: name, State: v1.StepWaiting}
	switch {
	case cs == nil:
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		step.State = v1.StepTerminated
		step.ExitCode = &t.ExitCode
		step.Reason = t.Reason
		step.StartedAt = timeOrNil(t.StartedAt)
		step.FinishedAt = timeOrNil(t.FinishedAt)
	case cs.State.Running != nil:
		step.State = v1.StepRunning
		step.StartedAt = timeOrNil(cs.State.Running.StartedAt)
	case cs.State.Waiting != nil:
		step.Reason = cs.State.Waiting.Reason
	}
	return step
}

func timeOrNil(t metav1.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// containerImage returns the image of pod's container named name.
func containerImage(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Name == name {
				return c.Image
			}
		}
	}
	return ""
}

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
