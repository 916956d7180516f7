package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file builds the one Pod that runs a TaskRun. Everything here is pure, so
// the Pod's shape is tested without an API server.

// maxPodText is the most bytes that the images and scripts of a run's Pod may
// hold once params are expanded (the API's Limits). A short reference
// repeated in every step and a long value multiply: a Pod past this size would
// be refused by the API server (at 3 MiB a request) or by etcd (1.5 MiB an
// object), and building it could take the manager's memory.
const maxPodText = 1 << 20

// podTooLargeError says that a run's Pod would pass maxPodText.
type podTooLargeError struct {
	// size is what the Pod's images and scripts would hold, counted without
	// building them.
	size, limit int64
}

func (e *podTooLargeError) Error() string {
	return fmt.Sprintf("with its params expanded, the Pod's images and scripts would hold %d bytes, over the limit of %d bytes (1 MiB)", e.size, e.limit)
}

// podForRun returns the Pod that runs task's steps for run, in order: every
// step but the last is an init container, so that the kubelet runs them one
// after another and stops at the first failure; the last is the container.
// The caller sets the owner reference. task must have at least one step,
// which the CRD's schema guarantees. A Pod whose images and scripts would pass
// maxPodText once values are substituted is a *podTooLargeError, found by
// counting: no more than maxPodText bytes of it are ever built.
func podForRun(run *v1beta1.TaskRun, task *v1beta1.Task, values map[string]string, activeDeadlineSeconds *int64) (*corev1.Pod, error) {
	budget := params.NewBudget(maxPodText)
	containers := make([]corev1.Container, len(task.Spec.Steps))
	stepNames := make([]string, len(task.Spec.Steps))
	for i, step := range task.Spec.Steps {
		containers[i] = containerForStep(step, params.Values{Params: values}, budget)
		stepNames[i] = step.Name
	}
	if budget.Exceeded() {
		return nil, &podTooLargeError{size: budget.Used(), limit: budget.Limit()}
	}
	last := len(containers) - 1
	var initContainers []corev1.Container
	if last > 0 {
		initContainers = containers[:last]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      runstate.PodName(run),
			Namespace: run.Namespace,
			Labels:    runstate.PodLabels(run),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			InitContainers:        initContainers,
			Containers:            containers[last:],
			ActiveDeadlineSeconds: activeDeadlineSeconds,
		},
	}
	// A step name too long for its container name is kept whole on the Pod,
	// so that status.steps and kubectl task logs still name the step.
	if names, needed := runstate.StepNamesAnnotation(stepNames); needed {
		pod.Annotations = map[string]string{runstate.AnnotationStepNames: names}
	}
	return pod, nil
}

// containerForStep returns step's container with values substituted into its
// image and script, charged to budget. An empty script runs the image's own
// entrypoint.
func containerForStep(step v1beta1.Step, values params.Values, budget *params.Budget) corev1.Container {
	c := corev1.Container{
		Name:  runstate.StepContainer(step.Name),
		Image: budget.Substitute(step.Image, values),
	}
	if step.Script != "" {
		c.Command = []string{"/bin/sh", "-c", budget.Substitute(step.Script, values)}
	}
	return c
}

// neverStarted reports whether no step of pod has started, so that stopping
// it loses no logs: the kubelet has not taken it up, or every container still
// waits (for its image, say).
func neverStarted(pod *corev1.Pod) bool {
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
