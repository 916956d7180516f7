package runinfo

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file says which shape a run's Pod got and why (docs/lifecycle.md,
// "The Pod"), for describe and the dashboard's run page alike: the
// controller records it in the Pod's annotations, and a Pod an earlier
// release built, which has none, has its steps as init containers.

// The shapes as describe and the dashboard say them.
const (
	shapeChained        = "chained (every step a container that waits for the one before)"
	shapeInitContainers = "init containers"
	shapeOneContainer   = "one container (a run of one step)"
)

// PodShape says how pod's steps are laid out: chained, or init containers,
// with the controller's reason when it asked for the chained shape and the
// run's steps could not have it.
func PodShape(pod *corev1.Pod) string {
	shape, reason := pod.Annotations[runstate.AnnotationPodShape], pod.Annotations[runstate.AnnotationPodShapeReason]
	switch {
	case runstate.Chained(pod):
		return shapeChained
	case shape != "" && shape != runstate.PodShapeInitContainers:
		return fmt.Sprintf("%s (a shape this kubectl task does not know: a later release's)", shape)
	case reason != "":
		return fmt.Sprintf("%s (not chained: %s)", shapeInitContainers, reason)
	case len(runstate.Steps(pod)) == 1:
		// Either shape runs one step as the Pod's one container.
		return shapeOneContainer
	}
	return shapeInitContainers
}

// RunPodShape reads the Pod of run's current attempt and says its shape
// (PodShape); "" while the run names no Pod, and gone when the Pod named no
// longer exists.
func RunPodShape(ctx context.Context, c client.Reader, run *v1.TaskRun) (shape string, gone bool, err error) {
	if run.Status.PodName == "" {
		return "", false, nil
	}
	pod := &corev1.Pod{}
	err = c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return "", true, nil
	case err != nil:
		return "", false, err
	}
	return PodShape(pod), false, nil
}
