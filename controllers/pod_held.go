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

// This file ends a run whose Pod the kubelet holds back for longer than the
// manager allows: a step's image it fails to pull (--image-pull-timeout, then
// ImagePullFailed), or a step it cannot make or a volume it cannot mount for
// the Pod's configuration (--pod-config-timeout, then PodConfigFailed),
// instead of letting the run wait until its own timeout (an hour by default)
// with no more than a Pending message. Both are one wait: what holds the Pod
// back (a hold), since when, for how long it may.

// DefaultImagePullTimeout is the default of --image-pull-timeout: long enough
// for a large image on a slow registry, or a registry's brief outage (the
// kubelet retries a pull with a backoff of up to 5 minutes), short against
// the default run timeout of an hour.
const DefaultImagePullTimeout = 5 * time.Minute

// DefaultPodConfigTimeout is the default of --pod-config-timeout: time to
// create the ConfigMap, Secret or claim a run was started before, once its
// Pending message names it, and for the kubelet to see it (it mounts again
// with a backoff of up to about 2 minutes, and makes a container again
// sooner); short against the default run timeout of an hour.
const DefaultPodConfigTimeout = 2 * time.Minute

// pullFailingReasons are the kubelet's waiting reasons for a container whose
// image it tried and failed to pull, and will try again.
var pullFailingReasons = map[string]bool{
	"ErrImagePull":     true,
	"ImagePullBackOff": true,
}

// configFailingReasons are the kubelet's waiting reasons for a container it
// cannot make or start for the Pod's configuration (a ConfigMap or Secret
// its env names is missing, a security setting the image cannot meet, a
// runtime that refuses the container), and will try again. One whose image
// cannot run at all fails the run at once instead (startFailureOf).
var configFailingReasons = map[string]bool{
	"CreateContainerConfigError": true,
	containerCreateError:         true,
	containerRunError:            true,
}

// hold is what holds a run's Pod back: a step whose container the kubelet
// waits to pull or make, or a volume it cannot mount.
type hold struct {
	// reason is how the run ends if the hold lasts: ImagePullFailed or
	// PodConfigFailed.
	reason v1beta1.TaskRunReason
	// step and container name the step held; volume, the volume held
	// instead (step is then empty).
	step, container, volume string
	// image is the held step's image.
	image string
	// why is the kubelet's reason and message: the container's waiting
	// state, or FailedMount and its Event's message.
	why corev1.ContainerStateWaiting
	// since is when the wait began, for a pull: when the step could first
	// start (findHeldStep). A configuration's is recorded on the Pod when
	// first seen (heldSince).
	since time.Time
}

// subject names what is held, as the messages and the Pod's record do.
func (h *hold) subject() string {
	if h.volume != "" {
		return fmt.Sprintf("volume %q", h.volume)
	}
	return fmt.Sprintf("step %q", h.step)
}

// outcome is the run's condition once h has lasted timeout.
func (h *hold) outcome(timeout time.Duration) *outcome {
	why := heldBecause(&h.why)
	switch {
	case h.reason == v1beta1.ReasonImagePullFailed:
		return failed(h.reason, "step %q could not pull image %q for %s: %s", h.step, h.image, timeout, why)
	case h.volume != "":
		return failed(h.reason, "volume %q could not be mounted for %s: %s", h.volume, timeout, why)
	default:
		return failed(h.reason, "step %q could not start for %s: %s", h.step, timeout, why)
	}
}

// findHeldStep returns the step of pod that the kubelet holds back, if the
// step that comes next in order is one. The container status has no time for
// a waiting state: a pull's wait is counted from when the step could start,
// which the Pod's status records and which survives a restart of the
// manager. The kubelet pulls a step's image when its turn comes, so the
// first step waits from when the kubelet took the Pod up (its
// status.startTime, else its creation) and any other from when the step
// before it finished.
func findHeldStep(pod *corev1.Pod) *hold {
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
		case cs.State.Waiting == nil:
			return nil
		}
		h := &hold{step: step.Name, container: step.Container, image: containerImage(pod, step.Container), why: *cs.State.Waiting, since: since}
		switch reason := cs.State.Waiting.Reason; {
		case pullFailingReasons[reason]:
			h.reason = v1beta1.ReasonImagePullFailed
		case configFailingReasons[reason] && startFailureOf(pod, step.Container, cs) == nil:
			h.reason = v1beta1.ReasonPodConfigFailed
		default:
			return nil
		}
		return h
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

// heldTimeout is how long a hold ending a run with reason may last.
func (r *TaskRunReconciler) heldTimeout(reason v1beta1.TaskRunReason) time.Duration {
	if reason == v1beta1.ReasonImagePullFailed {
		return r.ImagePullTimeout
	}
	return r.PodConfigTimeout
}

// failIfHeld ends the run when the kubelet has held its Pod back for longer
// than the manager allows (heldTimeout: 0 means no limit but the run's
// timeout). Before that, it asks for the run to be reconciled again when the
// timeout would pass: the Pod's status may not change meanwhile. A volume
// that cannot mount is looked for only while no step has started
// (readFailedMount), and the Pending message names it. Neither end is
// retried, whatever retryOn says: the next attempt would meet the same
// registry or configuration, and spend as long again before failing.
//
// The Pod is stopped only once the run's status says so (stopPodAfterEnd),
// not before, as a cancel's or a timeout's is: the hold, in the Pod's
// status, is the only evidence of this outcome. A Pod stopped before a
// status write that did not land (a conflict, a crash) would leave the next
// reconcile a deleted or Failed Pod, and a PodFailed that retryOn retries.
func (r *TaskRunReconciler) failIfHeld(ctx context.Context, s *runScope) error {
	if s.pod == nil {
		return nil
	}
	h := findHeldStep(s.pod)
	if h == nil {
		if h = r.readFailedMount(ctx, s); h == nil {
			return nil
		}
		s.mountHeld = h
	}
	timeout := r.heldTimeout(h.reason)
	if timeout <= 0 {
		return nil
	}
	since := r.heldSince(ctx, s, h)
	if left := since.Add(timeout).Sub(s.now); left > 0 {
		s.recheckWithin(left)
		return nil
	}
	log.FromContext(ctx).Info("Pod held back too long", "reason", h.reason, "held", h.subject(), "image", h.image,
		"kubeletReason", h.why.Reason, "kubeletMessage", h.why.Message, "since", since)
	s.outcome = h.outcome(timeout)
	return nil
}

// stopsPodAfterEnd are the reasons of a run that ends while its Pod goes on,
// for the controller to stop once the status says so (stopPodAfterEnd).
var stopsPodAfterEnd = map[v1beta1.TaskRunReason]bool{
	v1beta1.ReasonImagePullFailed: true,
	v1beta1.ReasonPodConfigFailed: true,
	v1beta1.ReasonStepFailed:      true,
}

// stopPodAfterEnd stops the Pod of a run that ended while its Pod went on,
// if that Pod has not ended: deleted if no step started, else its deadline
// lowered (stopPod). Those are the runs that ended ImagePullFailed or
// PodConfigFailed (failIfHeld), and those that ended StepFailed for a step
// that cannot start (podOutcome), whose Pod still shows it: a Pod that
// failed of itself may linger in the cache for a moment, and must not be
// deleted, nor its logs with it. The status write's own watch event brings
// the finished run here; an error retries it. The cache holds only Pods that
// have not ended, so a run whose Pod has ended or gone costs no read.
func (r *TaskRunReconciler) stopPodAfterEnd(ctx context.Context, run *v1beta1.TaskRun) error {
	ended := meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded)
	if ended == nil || run.Status.PodName == "" || !stopsPodAfterEnd[v1beta1.TaskRunReason(ended.Reason)] {
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
	if _, f := firstStartFailure(pod); ended.Reason == string(v1beta1.ReasonStepFailed) && f == nil {
		return nil
	}
	return r.stopPod(ctx, pod, r.clock())
}
