//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// What every Pod shape promises (API.md, "Steps without the kubelet's
// relist"): steps run one at a time, in order; a failing step stops the
// rest, which status.steps shows never started; a step's startedAt is when
// the step before it ended. These checks hold the manager to it with
// either shape (TestRunSemantics), kwok playing each as the kubelet would
// (docs/local-cluster.md).

// checkStepsOneAtATime runs four steps, the third of which exits 4. The run
// fails naming it; while it runs, status.steps never shows two steps
// running; at its end the first three are terminated, each started when
// the one before ended, and the fourth is Waiting, never started. Its Pod
// has the shape the manager was asked for; in a chained Pod the fourth
// step's container ended at once, skipped.
func checkStepsOneAtATime(t *testing.T, c *cluster, chained bool) {
	task := wrappers.Task(ns, "one-at-a-time").Steps(
		v1.Step{Name: "fetch", Image: "alpine:3", Script: "echo fetching\nsleep 2"},
		v1.Step{Name: "build", Image: "alpine:3", Script: "echo building"},
		v1.Step{Name: "test", Image: "alpine:3", Script: "echo testing\nexit 4"},
		v1.Step{Name: "publish", Image: "alpine:3", Script: "echo publishing"},
	).Obj()
	run := wrappers.TaskRun(ns, "one-at-a-time", task.Name).Obj()
	create(t, c, task, run)

	var overlaps []string
	got := &v1.TaskRun{}
	waitFor(t, time.Minute, "TaskRun "+run.Name+" to finish", func(ctx context.Context) error {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		var running []string
		for _, s := range got.Status.Steps {
			if s.State == v1.StepRunning {
				running = append(running, s.Name)
			}
		}
		if len(running) > 1 {
			overlaps = append(overlaps, fmt.Sprint(running))
		}
		if !runstate.Finished(got) {
			return fmt.Errorf("it is %s", describe(got))
		}
		return nil
	})
	if len(overlaps) > 0 {
		t.Errorf("TaskRun %s: status.steps showed steps running at once: %v", run.Name, overlaps)
	}
	if want := `step "test" exited with code 4`; outcome(got) != "False/StepFailed" || conditionMessage(got) != want {
		t.Errorf("TaskRun %s ended %s (%q), want False/StepFailed (%q)", run.Name, outcome(got), conditionMessage(got), want)
	}
	want := []stepSeen{
		{"fetch", v1.StepTerminated, 0, "Completed"},
		{"build", v1.StepTerminated, 0, "Completed"},
		{"test", v1.StepTerminated, 4, "Error"},
		{"publish", v1.StepWaiting, -1, ""},
	}
	if diff := cmp.Diff(want, stepsSeen(got)); diff != "" {
		t.Errorf("TaskRun %s: status.steps (-want +got):\n%s", run.Name, diff)
	}
	checkHandOvers(t, got)

	pod := podOf(t, c, got)
	checkChained(t, pod, chained)
	if chained {
		wantEnds := map[string]string{"step-fetch": "exit 0", "step-build": "exit 0", "step-test": "exit 4", "step-publish": "exit 0 " + runstate.SkippedMessage}
		if diff := cmp.Diff(wantEnds, containerEnds(pod)); diff != "" {
			t.Errorf("Pod %s: how its containers ended (-want +got):\n%s", pod.Name, diff)
		}
	}
}

// checkTimeoutAndCancel stops two runs of three steps while their second
// step runs: one by its timeout, one cancelled. Each ends with its reason,
// its first step terminated, its second started when the first ended and
// stopped, its third never started (both terminated with the run's reason,
// as the controller marks the steps of a run it stopped). Each Pod is
// stopped: its running step killed (exit code 137), and, in a chained Pod,
// the step still waiting for its turn too.
func checkTimeoutAndCancel(t *testing.T, c *cluster, chained bool) {
	ctx := context.Background()
	task := wrappers.Task(ns, "stopped-mid-step").Steps(
		v1.Step{Name: "first", Image: "alpine:3", Script: "echo first"},
		v1.Step{Name: "long", Image: "alpine:3", Script: "sleep 120"},
		v1.Step{Name: "last", Image: "alpine:3", Script: "echo last"},
	).Obj()
	// Long enough for the first step to end before it, on a busy machine.
	timedOut := wrappers.TaskRun(ns, "timed-out", task.Name).Timeout(8 * time.Second).Obj()
	cancelled := wrappers.TaskRun(ns, "cancelled", task.Name).Obj()
	create(t, c, task, timedOut, cancelled)

	waitFor(t, time.Minute, "TaskRun "+cancelled.Name+"'s second step to run", func(ctx context.Context) error {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(cancelled), cancelled); err != nil {
			return err
		}
		if steps := cancelled.Status.Steps; len(steps) != 3 || steps[1].State != v1.StepRunning {
			return fmt.Errorf("status.steps %v", stepsSeen(cancelled))
		}
		return nil
	})
	patch := client.MergeFrom(cancelled.DeepCopy())
	cancelled.Spec.Status = v1.TaskRunSpecStatusCancelled
	if err := c.client.Patch(ctx, cancelled, patch); err != nil {
		t.Fatalf("cancelling TaskRun %s: %v", cancelled.Name, err)
	}

	got := waitFinished(t, c, time.Minute, timedOut.Name, cancelled.Name)
	for name, reason := range map[string]v1.TaskRunReason{timedOut.Name: v1.ReasonTimeout, cancelled.Name: v1.ReasonCancelled} {
		run := got[name]
		if want := "False/" + string(reason); outcome(run) != want {
			t.Errorf("TaskRun %s ended %s (%q), want %s", name, outcome(run), conditionMessage(run), want)
		}
		seen := stepsSeen(run)
		stopped := stepSeen{"long", v1.StepTerminated, -1, string(reason)}
		// The run ends when its controller stops the Pod, or, timed out, when
		// the Pod's deadline, which counts alike, has killed the step first:
		// either way the step was stopped as it ran.
		if len(seen) == 3 && seen[1] == (stepSeen{"long", v1.StepTerminated, 137, "Error"}) {
			seen[1] = stopped
		}
		want := []stepSeen{{"first", v1.StepTerminated, 0, "Completed"}, stopped, {"last", v1.StepTerminated, -1, string(reason)}}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("TaskRun %s: status.steps, a step killed by the Pod's deadline standing for one the controller stopped (-want +got):\n%s", name, diff)
		}
		checkHandOvers(t, run)

		podName := runstate.PodName(run)
		pod := &corev1.Pod{}
		waitFor(t, time.Minute, "Pod "+podName+" to stop", func(ctx context.Context) error {
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, pod); err != nil {
				return err
			}
			if pod.Status.Phase != corev1.PodFailed {
				return fmt.Errorf("it is %s", pod.Status.Phase)
			}
			return nil
		})
		checkChained(t, pod, chained)
		wantEnds := map[string]string{"step-first": "exit 0", "step-long": "exit 137", "step-last": "waiting"}
		if chained {
			wantEnds["step-last"] = "exit 137"
		}
		if diff := cmp.Diff(wantEnds, containerEnds(pod)); diff != "" {
			t.Errorf("Pod %s of TaskRun %s: how its containers ended (-want +got):\n%s", pod.Name, name, diff)
		}
	}
}

// checkFallback runs, under a manager asked for chained Pods, a Task with a
// command step: its image may have no shell for the chained wrapper, so the
// Pod has init containers, annotated with the shape and why. The run
// succeeds, its steps handing over as in any Pod.
func checkFallback(t *testing.T, c *cluster) {
	task := wrappers.Task(ns, "with-command").Steps(
		v1.Step{Name: "prepare", Image: "alpine:3", Script: "echo preparing"},
		v1.Step{Name: "tool", Image: "alpine:3", Command: []string{"sh", "-c", "exit 0"}},
	).Obj()
	run := wrappers.TaskRun(ns, "fell-back", task.Name).Obj()
	create(t, c, task, run)
	got := waitFinished(t, c, time.Minute, run.Name)[run.Name]
	if outcome(got) != "True/Succeeded" {
		t.Errorf("TaskRun %s ended %s (%q), want True/Succeeded", run.Name, outcome(got), conditionMessage(got))
	}
	want := []stepSeen{{"prepare", v1.StepTerminated, 0, "Completed"}, {"tool", v1.StepTerminated, 0, "Completed"}}
	if diff := cmp.Diff(want, stepsSeen(got)); diff != "" {
		t.Errorf("TaskRun %s: status.steps (-want +got):\n%s", run.Name, diff)
	}
	checkHandOvers(t, got)
	pod := podOf(t, c, got)
	checkChained(t, pod, false)
	if shape := pod.Annotations[runstate.AnnotationPodShape]; shape != runstate.PodShapeInitContainers {
		t.Errorf("Pod %s: annotation %s %q, want %q", pod.Name, runstate.AnnotationPodShape, shape, runstate.PodShapeInitContainers)
	}
	if reason := pod.Annotations[runstate.AnnotationPodShapeReason]; reason == "" {
		t.Errorf("Pod %s: no annotation %s saying why it has init containers; annotations %v", pod.Name, runstate.AnnotationPodShapeReason, pod.Annotations)
	} else {
		t.Logf("Pod %s has init containers: %s", pod.Name, reason)
	}
}

// stepSeen is a step as status.steps says, without its times: its state,
// and, once it terminated, its exit code (else -1) and reason.
type stepSeen struct {
	Name     string
	State    v1.StepContainerState
	ExitCode int32
	Reason   string
}

// stepsSeen returns each of run's steps as status.steps says. The reason
// of a step not yet terminated is left out: the kubelet's waiting reason
// differs by Pod shape (PodInitializing for an init container).
func stepsSeen(run *v1.TaskRun) []stepSeen {
	seen := make([]stepSeen, len(run.Status.Steps))
	for i, s := range run.Status.Steps {
		seen[i] = stepSeen{Name: s.Name, State: s.State, ExitCode: -1}
		if s.State == v1.StepTerminated {
			seen[i].ExitCode, seen[i].Reason = ptr.Deref(s.ExitCode, -1), s.Reason
		}
	}
	return seen
}

// checkHandOvers checks the times of run's steps: a step that started did
// so when the step before it ended (the first, when it started), and ended
// no earlier; a step Waiting never started, nor did any after a step that
// never started (which a stopped run reports terminated, with no exit code).
func checkHandOvers(t testing.TB, run *v1.TaskRun) {
	t.Helper()
	var before *v1.StepState
	for i := range run.Status.Steps {
		s := &run.Status.Steps[i]
		switch {
		case s.StartedAt == nil:
			if s.State == v1.StepRunning || s.ExitCode != nil {
				t.Errorf("TaskRun %s: step %s is %s (exit code %v) with no startedAt", run.Name, s.Name, s.State, ptr.Deref(s.ExitCode, -1))
			}
		case s.State == v1.StepWaiting:
			t.Errorf("TaskRun %s: step %s is Waiting but started at %s", run.Name, s.Name, s.StartedAt)
		case before != nil && before.StartedAt == nil:
			t.Errorf("TaskRun %s: step %s started at %s, after step %s, which never did", run.Name, s.Name, s.StartedAt, before.Name)
		case before != nil && (before.FinishedAt == nil || !s.StartedAt.Equal(before.FinishedAt)):
			t.Errorf("TaskRun %s: step %s started at %s, not when step %s ended (%v)", run.Name, s.Name, s.StartedAt, before.Name, before.FinishedAt)
		case s.FinishedAt != nil && s.FinishedAt.Before(s.StartedAt):
			t.Errorf("TaskRun %s: step %s ended at %s, before it started (%s)", run.Name, s.Name, s.FinishedAt, s.StartedAt)
		}
		before = s
	}
}

// podOf returns the Pod of run's current attempt, as its status names it:
// node_cluster_test.go's runPod, for the tests without a real node.
func podOf(t testing.TB, c *cluster, run *v1.TaskRun) *corev1.Pod {
	t.Helper()
	name := run.Status.PodName
	if name == "" {
		name = runstate.PodName(run)
	}
	pod := &corev1.Pod{}
	if err := c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatalf("reading Pod %s of TaskRun %s: %v", name, run.Name, err)
	}
	return pod
}

// checkChained checks that pod is chained, every step a container, or has
// its steps but the last as init containers.
func checkChained(t testing.TB, pod *corev1.Pod, chained bool) {
	t.Helper()
	if runstate.Chained(pod) != chained || (chained && len(pod.Spec.InitContainers) > 0) || (!chained && len(pod.Spec.Containers) != 1) {
		t.Errorf("Pod %s: chained %t (annotations %v), %d init containers, %d containers; want chained %t",
			pod.Name, runstate.Chained(pod), pod.Annotations, len(pod.Spec.InitContainers), len(pod.Spec.Containers), chained)
	}
}

// containerEnds says how each of pod's containers ended, by name: "exit N"
// and its termination message if it is the chained wrapper's skip, or its
// state if it has not ended.
func containerEnds(pod *corev1.Pod) map[string]string {
	ends := map[string]string{}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			switch term := cs.State.Terminated; {
			case term != nil && term.Message == runstate.SkippedMessage:
				ends[cs.Name] = fmt.Sprintf("exit %d %s", term.ExitCode, term.Message)
			case term != nil:
				ends[cs.Name] = fmt.Sprintf("exit %d", term.ExitCode)
			case cs.State.Running != nil:
				ends[cs.Name] = "running"
			default:
				ends[cs.Name] = "waiting"
			}
		}
	}
	return ends
}
