package runpod

import (
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file says how a step failed, in the words a run's StepFailed message
// uses: the code it exited with, that it was killed for its memory, or that
// it never started because its image cannot run it (no such executable, no
// shell for a script). Such a start failure is for good with restartPolicy
// Never, whether the kubelet reports the container terminated (containerd:
// StartError, exit code 128) or waiting to be made again (a runtime that
// checks the executable when it creates the container): the step fails at
// once, not after the controller's --pod-config-timeout.

// Reasons the kubelet gives a container, in its waiting or terminated state.
const (
	// containerOOMKilled: the kernel killed it for its memory.
	containerOOMKilled = "OOMKilled"
	// containerCreateError and containerRunError: the runtime could not
	// create, or start, the container; the kubelet tries again.
	containerCreateError = "CreateContainerError"
	containerRunError    = "RunContainerError"
)

// startFailedReasons are the terminated reasons of a container the runtime
// could not start: containerd's, and cri-dockerd's.
var startFailedReasons = []string{"StartError", "ContainerCannotRun"}

// execFailed matches what the runtimes say of an executable that cannot be
// run: runc's `exec: "/bin/sh": stat /bin/sh: no such file or directory`,
// `exec: "gcc": executable file not found in $PATH` and `exec: "./x":
// permission denied`, and crun's and CRI-O's "executable file `gcc` not
// found in $PATH".
var execFailed = regexp.MustCompile(`exec: "[^"]*": (stat [^:]*: )?(no such file or directory|executable file not found|permission denied|exec format error)|executable file .*not found`)

// shellMissing matches a message that says /bin/sh, the shell of a script
// step's wrapper, could not be found.
var shellMissing = regexp.MustCompile("(\"/bin/sh\"|`/bin/sh`|stat /bin/sh)[^\n]*(?i:no such file or directory|not found)")

// startFailure is a step whose container the runtime cannot start, for good.
type startFailure struct {
	// reason and message are the kubelet's: StartError, say, and the
	// runtime's error.
	reason, message string
	// image is the step's image; noShell says that the step is a script
	// step and its image has no /bin/sh.
	image   string
	noShell bool
}

// startFailureOf returns how the runtime failed to start the step of pod
// that runs in container, whose status is cs, or nil if it did not fail so.
func startFailureOf(pod *corev1.Pod, container string, cs *corev1.ContainerStatus) *startFailure {
	var reason, message string
	switch {
	case cs == nil:
		return nil
	case cs.State.Terminated != nil && slices.Contains(startFailedReasons, cs.State.Terminated.Reason):
		reason, message = cs.State.Terminated.Reason, cs.State.Terminated.Message
	case cs.State.Waiting != nil && (cs.State.Waiting.Reason == containerCreateError || cs.State.Waiting.Reason == containerRunError) &&
		execFailed.MatchString(cs.State.Waiting.Message):
		reason, message = cs.State.Waiting.Reason, cs.State.Waiting.Message
	default:
		return nil
	}
	script := slices.Contains(runstate.AnnotatedNames(pod.Annotations, runstate.AnnotationScriptSteps), container)
	return &startFailure{
		reason:  reason,
		message: message,
		image:   containerImage(pod, container),
		noShell: script && shellMissing.MatchString(message),
	}
}

// stepReason is the step's status.steps[].reason: NoShell, else the kubelet's.
func (f *startFailure) stepReason() string {
	if f.noShell {
		return v1.StepReasonNoShell
	}
	return f.reason
}

// outcome is the StepFailed condition of a run whose step could not start.
func (f *startFailure) outcome(step string) *Condition {
	why := heldBecause(&corev1.ContainerStateWaiting{Reason: f.reason, Message: f.message})
	if f.noShell {
		return failed(v1.ReasonStepFailed, "step %q could not run its script: its image %q has no shell (/bin/sh): %s", step, f.image, why)
	}
	return failed(v1.ReasonStepFailed, "step %q could not start: %s", step, why)
}

// stepFailed is the StepFailed condition of a run whose step, reported as
// step and run in pod's container, failed: it could not start, or exited
// with a code other than 0, maybe killed for its memory.
func stepFailed(pod *corev1.Pod, step v1.StepState, container string) *Condition {
	if f := startFailureOf(pod, container, containerStatuses(pod)[container]); f != nil {
		return f.outcome(step.Name)
	}
	if step.Reason == v1.StepReasonTimedOut {
		return failed(v1.ReasonStepTimedOut, "step %q timed out%s", step.Name, timedOutAfter(pod, step.Name))
	}
	message := fmt.Sprintf("step %q exited with code %d", step.Name, *step.ExitCode)
	if step.Reason == containerOOMKilled {
		message += " (OOMKilled: killed for using too much memory)"
	}
	return failed(v1.ReasonStepFailed, "%s", message)
}

// firstStartFailure returns, in step order, the first step of pod that
// cannot start for good and how, or nil.
func firstStartFailure(pod *corev1.Pod) (runstate.Step, *startFailure) {
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if f := startFailureOf(pod, step.Container, statuses[step.Container]); f != nil {
			return step, f
		}
	}
	return runstate.Step{}, nil
}

// describeStartFailures reports in steps, StepStates(pod)'s, each step that
// cannot start for good as Terminated, with the reason startFailure gives:
// the kubelet may report it waiting to be made again, but it never runs, and
// its run fails.
func describeStartFailures(steps []v1.StepState, pod *corev1.Pod) {
	statuses := containerStatuses(pod)
	for i, step := range runstate.Steps(pod) {
		if f := startFailureOf(pod, step.Container, statuses[step.Container]); f != nil && i < len(steps) {
			steps[i].State = v1.StepTerminated
			steps[i].Reason = f.stepReason()
		}
	}
}

// StepCannotStart reports whether a step of pod cannot start, for good: its
// run has failed (Outcome), while the kubelet may go on making its container
// again.
func StepCannotStart(pod *corev1.Pod) bool {
	_, f := firstStartFailure(pod)
	return f != nil
}

// FailedWhileRunning reports whether a step of pod has failed while the Pod
// goes on: a step that cannot start (StepCannotStart), or a chained Pod's
// step that failed, after which the kubelet still runs the other containers
// (chainFailure). The controller stops such a Pod once its run has ended.
func FailedWhileRunning(pod *corev1.Pod) bool {
	return StepCannotStart(pod) || (chainFailure(pod, StepStates(pod)) != nil && !everyContainerEnded(pod))
}

// everyContainerEnded reports whether every step's container of pod has
// ended: a chained Pod whose later steps were skipped, which the kubelet
// ends by itself at its next relist.
func everyContainerEnded(pod *corev1.Pod) bool {
	statuses := containerStatuses(pod)
	for _, step := range runstate.Steps(pod) {
		if cs := statuses[step.Container]; cs == nil || cs.State.Terminated == nil {
			return false
		}
	}
	return true
}
