package runpod

import (
	"time"

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
	if runstate.Chained(pod) {
		chainSteps(steps, pod, containers, statuses)
	}
	applyScriptExitCodes(steps, pod)
	describeStartFailures(steps, pod)
	return steps
}

// chainSteps turns the container states of a chained Pod's steps into the
// steps' own. Every container runs from the Pod's start, but a step runs
// only once its turn has come: once every step before it has ended with
// code 0 (its container's, which onError: continue makes 0). Until then, and
// for good once a step before it failed, it is Waiting, its container's
// reason kept if the kubelet holds it (an image that cannot be pulled, say),
// and the container's end is not the step's: a skipped step ran nothing
// (runstate.SkippedMessage), a step stopped while it waited neither. A step
// whose turn came began when the step before it ended (its container ends
// as soon as it has handed over) or, if later, when its own container
// started. Once it has ended, its wrapper's message says, where it could,
// when its script began and ended (stepscript's chainTimes), and those are
// its times: the kubelet records a container's start only after its
// process runs, and a container ends after it has handed over, so that its
// times, read to the second, may not bound its command. A step whose
// container cannot start is read as such, whatever its turn
// (start_failure.go).
func chainSteps(steps []v1.StepState, pod *corev1.Pod, containers []runstate.Step, statuses map[string]*corev1.ContainerStatus) {
	turn := true
	var handedOver *metav1.Time
	for i, c := range containers {
		cs := statuses[c.Container]
		step := &steps[i]
		scriptTimes(step, cs)
		switch {
		case startFailureOf(pod, c.Container, cs) != nil:
		case !turn:
			reason := ""
			if cs != nil && cs.State.Waiting != nil {
				reason = cs.State.Waiting.Reason
			}
			*step = v1.StepState{Name: c.Name, State: v1.StepWaiting, Reason: reason}
		case handedOver != nil && step.StartedAt != nil && step.StartedAt.Before(handedOver):
			step.StartedAt = handedOver.DeepCopy()
		}
		passed := turn && step.State == v1.StepTerminated && step.ExitCode != nil && *step.ExitCode == 0 &&
			(cs == nil || cs.State.Terminated == nil || cs.State.Terminated.Message != runstate.SkippedMessage)
		if passed {
			handedOver = step.FinishedAt
		}
		turn = passed
	}
}

// scriptTimes makes the times a chained step's ended container's message
// holds the step's.
func scriptTimes(step *v1.StepState, cs *corev1.ContainerStatus) {
	if step.State != v1.StepTerminated || cs == nil || cs.State.Terminated == nil {
		return
	}
	m, err := runstate.ParseTerminationMessage(cs.State.Terminated.Message)
	if err != nil || m.StartedAt == nil || m.FinishedAt == nil || *m.FinishedAt < *m.StartedAt {
		return
	}
	step.StartedAt = &metav1.Time{Time: time.Unix(*m.StartedAt, 0)}
	step.FinishedAt = &metav1.Time{Time: time.Unix(*m.FinishedAt, 0)}
}

// containerStatuses returns the status of each of pod's containers, init
// containers (native sidecars too) and the container alike, by container
// name. Readers look up the steps' (runstate.Steps) in it.
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

// NeverStarted reports whether no step of pod has started, and no sidecar
// has run, so that stopping it loses no logs: the kubelet has not taken it
// up, or every step's container still waits (for its image, say), and every
// sidecar's too. A sidecar that ran has logs that say why a run whose steps
// never started failed (SidecarFailed), and they stay after the run; a
// sidecar that waits on its image holds back no deletion.
func NeverStarted(pod *corev1.Pod) bool {
	if pod.Status.StartTime == nil {
		return true
	}
	if sidecarRan(pod) {
		return false
	}
	if runstate.Chained(pod) {
		// Every step's container runs from the start, most of them
		// waiting: the first step tells.
		return NeverStartedAStep(pod)
	}
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if cs := statuses[step.Container]; cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return false
		}
	}
	return true
}
