package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file ends a run whose step's image the kubelet has failed to pull for
// longer than the manager's --image-pull-timeout, instead of letting it wait
// in ImagePullBackOff until its own timeout (an hour by default) with no
// more than a Pending message.

// DefaultImagePullTimeout is the default of --image-pull-timeout: long enough
// for a large image on a slow registry, or a registry's brief outage (the
// kubelet retries a pull with a backoff of up to 5 minutes), short against
// the default run timeout of an hour.
const DefaultImagePullTimeout = 5 * time.Minute

// pullFailingReasons are the kubelet's waiting reasons for a container whose
// image it tried and failed to pull, and will try again.
var pullFailingReasons = map[string]bool{
	"ErrImagePull":     true,
	"ImagePullBackOff": true,
}

// failingPull is a step whose image the kubelet fails to pull.
type failingPull struct {
	step  string
	image string
	// waiting is the container's waiting state: the kubelet's reason and message.
	waiting *corev1.ContainerStateWaiting
	// since is when the step could first start, and so its image be pulled.
	since time.Time
}

// findFailingPull returns the step of pod whose image the kubelet fails to
// pull, if the step that comes next in order is one. The container status
// has no time for a waiting state, so the wait is counted from when the step
// could start, which Pod's status records, and survives a restart of the
// manager: the kubelet pulls a step's image when its turn comes, so the first
// step waits from when the kubelet took the Pod up (its status.startTime,
// else its creation) and any other from when the step before it finished.
func findFailingPull(pod *corev1.Pod) *failingPull {
	statuses := containerStatuses(pod)
	since := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		since = pod.Status.StartTime.Time
	}
	for _, step := range runstate.Steps(pod) {
		cs := statuses[step.Container]
		switch {
		case cs == nil:
			return nil
		case cs.State.Terminated != nil:
			if finished := cs.State.Terminated.FinishedAt.Time; finished.After(since) {
				since = finished
			}
			continue
		case cs.State.Waiting != nil && pullFailingReasons[cs.State.Waiting.Reason]:
			return &failingPull{step: step.Name, image: containerImage(pod, step.Container), waiting: cs.State.Waiting, since: since}
		}
		return nil
	}
	return nil
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

// imagePullFailed is the outcome of a run whose step's image could not be
// pulled within timeout.
func imagePullFailed(pull *failingPull, timeout time.Duration) *outcome {
	message := pull.waiting.Reason
	if pull.waiting.Message != "" {
		message += ": " + pull.waiting.Message
	}
	return failed(v1beta1.ReasonImagePullFailed, "step %q could not pull image %q for %s: %s", pull.step, pull.image, timeout, message)
}

// failIfImagePullStuck ends the run ImagePullFailed when the kubelet has
// failed to pull a step's image for longer than r.ImagePullTimeout. Before
// that, it asks for the run to be reconciled again when the timeout would
// pass: the Pod's status may not change meanwhile. ImagePullFailed is not
// retried, whatever retryOn says: the next attempt would pull the same image
// from the same registry, and spend as long again before failing.
//
// The Pod is stopped only once the run's status says ImagePullFailed
// (stopPodAfterEnd), not before, as a cancel's or a timeout's is: the
// failing pull, in the Pod's status, is the only evidence of this outcome. A
// Pod stopped before a status write that did not land (a conflict, a crash)
// would leave the next reconcile a deleted or Failed Pod, and a PodFailed
// that retryOn retries.
func (r *TaskRunReconciler) failIfImagePullStuck(ctx context.Context, s *runScope) error {
	if r.ImagePullTimeout <= 0 || s.pod == nil {
		return nil
	}
	pull := findFailingPull(s.pod)
	if pull == nil {
		return nil
	}
	if left := pull.since.Add(r.ImagePullTimeout).Sub(s.now); left > 0 {
		s.recheckWithin(left)
		return nil
	}
	log.FromContext(ctx).Info("image pull timed out", "step", pull.step, "image", pull.image, "reason", pull.waiting.Reason)
	s.outcome = imagePullFailed(pull, r.ImagePullTimeout)
	return nil
}

// stopPodAfterEnd stops the Pod of a run that ended while its Pod went on,
// if that Pod has not ended: deleted if no step started, else its deadline
// lowered (stopPod). Those are the runs that ended ImagePullFailed, and
// those that ended StepFailed for a step that cannot start (podOutcome),
// whose Pod still shows it: a Pod that failed of itself may linger in the
// cache for a moment, and must not be deleted, nor its logs with it. The
// status write's own watch event brings the finished run here; an error
// retries it. The cache holds only Pods that have not ended, so a run whose
// Pod has ended or gone costs no read.
func (r *TaskRunReconciler) stopPodAfterEnd(ctx context.Context, run *v1beta1.TaskRun) error {
	ended := meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded)
	if ended == nil || run.Status.PodName == "" {
		return nil
	}
	reason := v1beta1.TaskRunReason(ended.Reason)
	if reason != v1beta1.ReasonImagePullFailed && reason != v1beta1.ReasonStepFailed {
		return nil
	}
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("getting Pod %s/%s of TaskRun %s: %w", run.Namespace, run.Status.PodName, run.Name, err)
	case !metav1.IsControlledBy(pod, run) || pod.DeletionTimestamp != nil:
		return nil
	}
	if _, f := firstStartFailure(pod); reason == v1beta1.ReasonStepFailed && f == nil {
		return nil
	}
	return r.stopPod(ctx, pod, r.clock())
}
