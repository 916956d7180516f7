package runpod

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file finds what the kubelet holds a run's Pod back for, and would
// hold it back for again and again: a step's image it fails to pull, or a
// step it cannot make or a volume it cannot mount for the Pod's
// configuration (mount.go). How long a hold may last, and since when it
// counts for a configuration, are the controller's to decide.

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

// Hold is what holds a run's Pod back: a step whose container the kubelet
// waits to pull or make, or a volume it cannot mount.
type Hold struct {
	// Reason is how the run ends if the hold lasts: ImagePullFailed or
	// PodConfigFailed.
	Reason v1.TaskRunReason
	// Step and Container name the step held; Volume, the volume held
	// instead, or Sidecar, the sidecar whose image cannot be pulled (Step
	// is then empty).
	Step, Container, Volume, Sidecar string
	// Image is the held step's or sidecar's image.
	Image string
	// Why is the kubelet's reason and message: the container's waiting
	// state, or FailedMount and its Event's message.
	Why corev1.ContainerStateWaiting
	// Since is when the wait began, for a pull: when the step could first
	// start (FindHeldStep). The Pod's status has none for a configuration,
	// whose start the controller records itself.
	Since time.Time
}

// Subject names what is held, as the messages and the Pod's record do.
func (h *Hold) Subject() string {
	if h.Volume != "" {
		return fmt.Sprintf("volume %q", h.Volume)
	}
	if h.Sidecar != "" {
		return fmt.Sprintf("sidecar %q", h.Sidecar)
	}
	return fmt.Sprintf("step %q", h.Step)
}

// Outcome is the run's condition once h has lasted timeout.
func (h *Hold) Outcome(timeout time.Duration) *Condition {
	why := heldBecause(&h.Why)
	switch {
	case h.Sidecar != "":
		return failed(v1.ReasonSidecarFailed, "sidecar %q could not pull image %q for %s: %s", h.Sidecar, h.Image, timeout, why)
	case h.Reason == v1.ReasonImagePullFailed:
		return failed(h.Reason, "step %q could not pull image %q for %s: %s", h.Step, h.Image, timeout, why)
	case h.Volume != "":
		return failed(h.Reason, "volume %q could not be mounted for %s: %s", h.Volume, timeout, why)
	default:
		return failed(h.Reason, "step %q could not start for %s: %s", h.Step, timeout, why)
	}
}

// FindHeldStep returns the step of pod that the kubelet holds back, if the
// step that comes next in order is one. The container status has no time for
// a waiting state: a pull's wait is counted from when the step could start,
// which the Pod's status records and which survives a restart of the
// manager. The kubelet pulls a step's image when its turn comes, so the
// first step waits from when the kubelet took the Pod up (its
// status.startTime, else its creation) and any other from when the step
// before it finished. In a Pod of release 7's, the first step waits from
// when its last native sidecar started, if later: the kubelet starts the
// steps only once their sidecars run, and a sidecar's wait is no step's. A
// sidecar whose image the kubelet fails to pull holds the Pod back itself,
// from when it could start (the Pod taken up, or the sidecar before it
// started): the run then ends SidecarFailed, as a step's ImagePullFailed.
func FindHeldStep(pod *corev1.Pod) *Hold {
	statuses := containerStatuses(pod)
	since := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		since = pod.Status.StartTime.Time
	}
	for _, sidecar := range runstate.Sidecars(pod) {
		cs := statuses[sidecar.Container]
		switch {
		case cs == nil:
		case cs.State.Running != nil && cs.State.Running.StartedAt.After(since):
			since = cs.State.Running.StartedAt.Time
		case cs.State.Waiting != nil && pullFailingReasons[cs.State.Waiting.Reason] && NeverStartedAStep(pod):
			return &Hold{Reason: v1.ReasonImagePullFailed, Sidecar: sidecar.Name, Container: sidecar.Container,
				Image: containerImage(pod, sidecar.Container), Why: *cs.State.Waiting, Since: since}
		}
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
		h := &Hold{Step: step.Name, Container: step.Container, Image: containerImage(pod, step.Container), Why: *cs.State.Waiting, Since: since}
		switch reason := cs.State.Waiting.Reason; {
		case pullFailingReasons[reason]:
			h.Reason = v1.ReasonImagePullFailed
		case configFailingReasons[reason] && startFailureOf(pod, step.Container, cs) == nil:
			h.Reason = v1.ReasonPodConfigFailed
		default:
			return nil
		}
		return h
	}
	return nil
}
