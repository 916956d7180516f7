package runpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file reads a Pod's sidecars back: their states for status.sidecars,
// the sidecar that holds the first step back, and whether sidecars still run
// once the steps have ended.

// SidecarStates returns the state of each of pod's sidecars, in order, as
// status.sidecars reports them; nil for a Pod without sidecars. A sidecar
// the kubelet has not reported yet waits.
func SidecarStates(pod *corev1.Pod) []v1.SidecarState {
	sidecars := runstate.Sidecars(pod)
	if len(sidecars) == 0 {
		return nil
	}
	statuses := containerStatuses(pod)
	states := make([]v1.SidecarState, len(sidecars))
	for i, s := range sidecars {
		states[i] = sidecarState(s.Name, statuses[s.Container])
	}
	return states
}

// sidecarState reports one sidecar from its container's status (nil before
// the kubelet has reported any).
func sidecarState(name string, cs *corev1.ContainerStatus) v1.SidecarState {
	state := v1.SidecarState{Name: name, State: v1.StepWaiting, Ready: ptr.To(false)}
	if cs == nil {
		return state
	}
	state.Ready = ptr.To(cs.Ready)
	if cs.RestartCount > 0 {
		state.RestartCount = ptr.To(cs.RestartCount)
	}
	switch {
	case cs.State.Running != nil:
		state.State = v1.StepRunning
		state.StartedAt = cs.State.Running.StartedAt.DeepCopy()
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		state.State, state.ExitCode, state.Reason = v1.StepTerminated, ptr.To(t.ExitCode), t.Reason
		state.StartedAt, state.FinishedAt = t.StartedAt.DeepCopy(), t.FinishedAt.DeepCopy()
	case cs.State.Waiting != nil:
		state.Reason = cs.State.Waiting.Reason
	}
	if len(state.Reason) > maxSidecarReason {
		state.Reason = state.Reason[:maxSidecarReason]
	}
	return state
}

// maxSidecarReason is the schema's limit on status.sidecars[].reason.
const maxSidecarReason = 128

// SidecarHold is a sidecar that holds a Pod's first step back, and why.
type SidecarHold struct {
	// Sidecar is the sidecar's name in the Task.
	Sidecar string
	// Why says what keeps it from having started and being ready: the
	// kubelet's waiting reason and message (an image it cannot pull, a
	// container it cannot make), its exit, or its probe.
	Why string
}

// HeldBySidecar returns the first of pod's sidecars, in order, that holds
// the first step back for a reason of its own, or nil: while no step has
// started, a sidecar that waits for a reason other than being on its way,
// has exited (or was restarted after exiting), or runs but has not passed
// its startupProbe, or its readinessProbe. A sidecar on its way (its image
// being pulled, its container made) holds nothing of its own: what holds
// the Pod is said by the Pending message.
func HeldBySidecar(pod *corev1.Pod) *SidecarHold {
	if !NeverStartedAStep(pod) {
		return nil
	}
	statuses := containerStatuses(pod)
	containers := map[string]corev1.Container{}
	for _, c := range pod.Spec.InitContainers {
		containers[c.Name] = c
	}
	for _, s := range runstate.Sidecars(pod) {
		cs := statuses[s.Container]
		if cs == nil {
			return nil
		}
		if why := sidecarHeldBecause(containers[s.Container], cs); why != "" {
			return &SidecarHold{Sidecar: s.Name, Why: why}
		}
		if cs.State.Running == nil || !ptr.Deref(cs.Started, false) {
			// On its way: the sidecars after it have not begun.
			return nil
		}
	}
	return nil
}

// sidecarHeldBecause says why sidecar c, whose status is cs, is not started
// and ready for a reason of its own, "" when it is, or is on its way.
func sidecarHeldBecause(c corev1.Container, cs *corev1.ContainerStatus) string {
	exited := ""
	if last := cs.LastTerminationState.Terminated; last != nil && cs.RestartCount > 0 {
		exited = fmt.Sprintf("; it exited with code %d (%s), restarted %d times", last.ExitCode, last.Reason, cs.RestartCount)
	}
	switch {
	case cs.State.Waiting != nil && !benignWaiting[cs.State.Waiting.Reason]:
		return heldBecause(cs.State.Waiting) + exited
	case cs.State.Waiting != nil && exited != "":
		return cs.State.Waiting.Reason + exited
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		return fmt.Sprintf("exited with code %d (%s)", t.ExitCode, t.Reason)
	case cs.State.Running == nil:
		return ""
	case !ptr.Deref(cs.Started, false) && c.ReadinessProbe != nil:
		return "running, not ready: its readiness probe has not passed" + exited
	case !ptr.Deref(cs.Started, false) && c.StartupProbe != nil:
		return "running, not started: its startup probe has not passed" + exited
	case !cs.Ready && c.ReadinessProbe != nil:
		return "started, not ready: its readiness probe has not passed" + exited
	}
	return ""
}

// NeverStartedAStep reports whether no step of pod has started: every
// step's container, if reported, still waits.
func NeverStartedAStep(pod *corev1.Pod) bool {
	steps := StepStates(pod)
	return len(steps) == 0 || steps[0].State == v1.StepWaiting
}

// SidecarsOutliveSteps reports whether pod's steps have all ended while a
// sidecar of it still runs: a Pod that the kubelet has yet to stop, its
// sidecars given their grace period, which the controller stops once the
// run's status says that it ended.
func SidecarsOutliveSteps(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	statuses := containerStatuses(pod)
	running := false
	for _, s := range runstate.Sidecars(pod) {
		if cs := statuses[s.Container]; cs != nil && cs.State.Terminated == nil {
			running = true
		}
	}
	return running && everyContainerEnded(pod)
}

// sidecarRan reports whether a sidecar of pod has run: its logs are worth
// keeping (NeverStarted).
func sidecarRan(pod *corev1.Pod) bool {
	statuses := containerStatuses(pod)
	for _, s := range runstate.Sidecars(pod) {
		if cs := statuses[s.Container]; cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil || cs.RestartCount > 0) {
			return true
		}
	}
	return false
}
