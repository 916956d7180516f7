package runpod

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
)

// This file reads back what script steps wrote as their termination
// messages (internal/stepscript): each step's own exit code under onError:
// continue, the run's results, and results too large for a message. It reads
// the Pod alone, through the annotations Build gives it, so that the
// controller's trimmed Pod in its cache is enough.

// stepMessage is one script step's termination message, as the kubelet
// reported it once the step ended.
type stepMessage struct {
	// step and container name the step.
	step, container string
	// text is the message as reported.
	text string
	// parsed is the message read, when it is the protocol's object.
	parsed *runstate.TerminationMessage
}

// scriptStepMessages returns, in step order, the termination message of
// every script step of pod that has ended with one. Steps that are no script
// steps (or a Pod of an earlier release, which names none) are left out:
// what they write there is their own.
func scriptStepMessages(pod *corev1.Pod) []stepMessage {
	scriptSteps := runstate.AnnotatedNames(pod.Annotations, runstate.AnnotationScriptSteps)
	if len(scriptSteps) == 0 {
		return nil
	}
	statuses := containerStatuses(pod)
	var messages []stepMessage
	for _, step := range runstate.Steps(pod) {
		cs := statuses[step.Container]
		if cs == nil || !slices.Contains(scriptSteps, step.Container) {
			continue
		}
		t := cs.State.Terminated
		if t == nil || t.Message == "" {
			continue
		}
		m := stepMessage{step: step.Name, container: step.Container, text: t.Message}
		if parsed, err := runstate.ParseTerminationMessage(t.Message); err == nil {
			m.parsed = &parsed
		}
		messages = append(messages, m)
	}
	return messages
}

// applyScriptExitCodes reports, for each script step whose container exited 0
// but whose script did not (onError: continue), the script's own code, with
// reason Continued; and for each script step that ran past its timeout,
// whatever its onError, the script's own code with reason TimedOut (its
// container's code says whether it failed the run: failedRun). steps are
// StepStates(pod)'s.
func applyScriptExitCodes(steps []v1.StepState, pod *corev1.Pod) {
	for _, m := range scriptStepMessages(pod) {
		if m.parsed == nil || (*m.parsed.ExitCode == 0 && !m.parsed.TimedOut) {
			continue
		}
		for i := range steps {
			step := &steps[i]
			if step.Name != m.step || step.State != v1.StepTerminated || step.ExitCode == nil ||
				(*step.ExitCode != 0 && !m.parsed.TimedOut) {
				continue
			}
			code := *m.parsed.ExitCode
			step.ExitCode = &code
			step.Reason = v1.StepReasonContinued
			if m.parsed.TimedOut {
				step.Reason = v1.StepReasonTimedOut
			}
		}
	}
}

// failedRun reports whether step, one of StepStates' steps whose container
// has status cs, failed its run: it exited non-zero, and onError: continue
// did not let it pass; or it ran past its timeout, and its container, which
// exits 0 only under onError: continue, did not exit 0.
func failedRun(step v1.StepState, cs *corev1.ContainerStatus) bool {
	if step.State != v1.StepTerminated || step.ExitCode == nil {
		return false
	}
	if step.Reason == v1.StepReasonTimedOut {
		return cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0
	}
	return *step.ExitCode != 0 && step.Reason != v1.StepReasonContinued
}

// stepTimeout returns the timeout that the script step named step of pod
// ran past, as its message says, or 0.
func stepTimeout(pod *corev1.Pod, step string) time.Duration {
	for _, m := range scriptStepMessages(pod) {
		if m.step == step && m.parsed != nil && m.parsed.TimedOut && m.parsed.TimeoutSeconds != nil {
			return time.Duration(*m.parsed.TimeoutSeconds) * time.Second
		}
	}
	return 0
}

// timedOutAfter says how long step ran before it was stopped: " after 10m0s",
// or nothing when its timeout is not known.
func timedOutAfter(pod *corev1.Pod, step string) string {
	if d := stepTimeout(pod, step); d > 0 {
		return " after " + d.String()
	}
	return ""
}

// Results returns the run's results as pod's script steps reported them, in
// the Task's order: each result's value from the last step whose message
// holds it and fits. A result no step wrote is left out; nil when there is
// none.
func Results(pod *corev1.Pod) []v1.RunResult {
	names := runstate.AnnotatedNames(pod.Annotations, runstate.AnnotationResults)
	if len(names) == 0 {
		return nil
	}
	values := map[string]string{}
	for _, m := range scriptStepMessages(pod) {
		// A message longer than a kubelet keeps is too large
		// (firstResultsTooLarge), and its values may be longer than a
		// result's value may be.
		if m.parsed == nil || len(m.text) > runstate.MaxTerminationMessage {
			continue
		}
		for _, name := range names {
			if v, ok := m.parsed.Results[name]; ok {
				values[name] = v
			}
		}
	}
	var results []v1.RunResult
	for _, name := range names {
		if v, ok := values[name]; ok {
			results = append(results, v1.RunResult{Name: name, Value: &v})
		}
	}
	return results
}

// resultsTooLarge says which step's results did not fit its termination
// message.
type resultsTooLarge struct {
	step string
	// size is the message's length as reported, or, when the step said so
	// itself (reported), the length it would have had.
	size int
	// cut says that the message is no JSON object and as long as the
	// kubelet keeps: the kubelet cut it, and it was longer still.
	cut bool
	// reported says that the step's wrapper found the results too large and
	// said so; fileCut, that a result's file was longer than it reads.
	reported, fileCut bool
	// limit is what the kubelet keeps of each step's message in this Pod.
	limit int
	// steps and sidecars are how many steps and native sidecars (release
	// 7's) the Pod has: the kubelet shares the Pod's 12 KiB among all its
	// containers, sidecars too, which sets limit.
	steps, sidecars int
}

// firstResultsTooLarge returns the first script step of pod, in step order,
// whose message is too large to hold its results, or nil. The step's wrapper
// says so itself, with the size its results would take; failing that (a
// wrapper told a larger limit than its kubelet keeps), a message longer
// than 4096 bytes is too large however it reads (a kubelet would have cut
// it); one the kubelet cut is no JSON object and holds as many bytes as it
// keeps for each step: 4096, less in a Pod of more than three steps, which
// share 12 KiB. A shorter message that is no JSON object (a step that wrote
// over its own message, say) is not read, and is no error.
func firstResultsTooLarge(pod *corev1.Pod) *resultsTooLarge {
	sidecars := len(runstate.NativeSidecars(pod))
	steps := len(pod.Spec.InitContainers) + len(pod.Spec.Containers) - sidecars
	limit := runstate.TerminationMessageLimit(steps + sidecars)
	for _, m := range scriptStepMessages(pod) {
		switch {
		case m.parsed != nil && m.parsed.ResultsTooLarge != nil:
			r := m.parsed.ResultsTooLarge
			return &resultsTooLarge{step: m.step, size: r.Size, reported: true, fileCut: r.Cut, limit: r.Limit, steps: steps, sidecars: sidecars}
		case len(m.text) > runstate.MaxTerminationMessage:
			return &resultsTooLarge{step: m.step, size: len(m.text), limit: limit, steps: steps, sidecars: sidecars}
		case m.parsed == nil && len(m.text) >= limit:
			return &resultsTooLarge{step: m.step, size: len(m.text), cut: true, limit: limit, steps: steps, sidecars: sidecars}
		}
	}
	return nil
}

// outcome is the run's ResultsTooLarge condition.
func (r *resultsTooLarge) outcome() *Condition {
	if r.reported {
		more := ""
		if r.fileCut {
			more = fmt.Sprintf(" (more still: a result's file is longer than the %d bytes a step reads of it)", stepscript.MaxResultRead)
		}
		return failed(v1.ReasonResultsTooLarge,
			"step %q's results do not fit its termination message: they take %d bytes%s, over the limit of %d bytes for each step of %s (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace",
			r.step, r.size, more, r.limit, podOf(r.steps, r.sidecars))
	}
	if r.cut {
		return failed(v1.ReasonResultsTooLarge,
			"step %q's results do not fit its termination message: the kubelet cut the message at %d bytes, what it keeps for each step of %s (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace",
			r.step, r.size, podOf(r.steps, r.sidecars))
	}
	return failed(v1.ReasonResultsTooLarge,
		"step %q's results do not fit its termination message: it holds %d bytes, over the limit of %d bytes; write less to $(results.NAME.path), or hand large values over in a workspace",
		r.step, r.size, r.limit)
}

// continuedSteps returns the steps that exited non-zero or ran past their
// timeout, and that onError: continue let pass, in step order.
func continuedSteps(steps []v1.StepState) []v1.StepState {
	var continued []v1.StepState
	for _, step := range steps {
		if (step.Reason == v1.StepReasonContinued || step.Reason == v1.StepReasonTimedOut) && step.ExitCode != nil {
			continued = append(continued, step)
		}
	}
	return continued
}

// succeededPast is the Succeeded condition of a run whose Pod, pod,
// succeeded: every step exited 0, or says which ones onError: continue let
// pass.
func succeededPast(pod *corev1.Pod, continued []v1.StepState) *Condition {
	if len(continued) == 0 {
		return succeeded()
	}
	parts := make([]string, len(continued))
	for i, step := range continued {
		parts[i] = fmt.Sprintf("%q exited with code %d", step.Name, *step.ExitCode)
		if step.Reason == v1.StepReasonTimedOut {
			parts[i] = fmt.Sprintf("%q timed out%s", step.Name, timedOutAfter(pod, step.Name))
		}
	}
	o := succeeded()
	o.Message = fmt.Sprintf("every step exited 0 or was let pass by onError: continue (%s)", strings.Join(parts, ", "))
	return o
}

// podOf says how many steps, and native sidecars if any, a Pod has: "a Pod
// of 3 steps", "a Pod of 2 steps and 1 sidecar".
func podOf(steps, sidecars int) string {
	pod := "a Pod of " + plural(steps, "step")
	if sidecars > 0 {
		pod += " and " + plural(sidecars, "sidecar")
	}
	return pod
}

// plural is n and noun, "1 step" or "3 steps".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
