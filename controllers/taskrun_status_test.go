package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// podOf is the Pod "run-pod" of run "run" for task.
func podOf(task *wrappers.TaskWrapper) *corev1.Pod {
	pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task.Obj(), runpod.Inputs{Name: "run-pod"})
	if err != nil {
		panic(err)
	}
	return pod
}

// threeStepPod is the Pod of run "run" for a Task with steps a, b and c.
func threeStepPod() *corev1.Pod {
	return podOf(wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true"))
}

// endedResultsPod is the Pod of run "run" for a Task of n script steps that
// declares the results version and digest, every step ended with code 0 and
// the termination message messages gives it, by step.
func endedResultsPod(n int, messages map[int]string) *corev1.Pod {
	task := wrappers.Task("ns", "t").Results("version", "digest")
	for i := range n {
		task.Step(fmt.Sprintf("s%d", i), "alpine", "true")
	}
	pod := podOf(task)
	status := wrappers.PodStatus(pod).At(testTime).Succeeded()
	for i, message := range messages {
		status.Ended(i, 0, message)
	}
	return withStatus(pod, status.Obj())
}

func withStatus(pod *corev1.Pod, status corev1.PodStatus) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status = status
	return pod
}

// succeeded is the outcome of a run whose Pod succeeded, every step exiting 0.
func succeeded() *outcome {
	return &outcome{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"}
}

func TestApplyStatus(t *testing.T) {
	started := testTime
	later := testTime.Add(time.Minute)
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(started).Running(0).Obj())
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Generation = 2

	running := &outcome{metav1.ConditionUnknown, v1.ReasonRunning, `running step "a" (1 of 3)`}
	applyStatus(run, running, started, pod, runpod.StepStates(pod), started)
	want := v1.TaskRunStatus{
		Conditions: []metav1.Condition{{
			Type: v1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: "Running",
			Message: `running step "a" (1 of 3)`, ObservedGeneration: 2, LastTransitionTime: metav1.Time{Time: started},
		}},
		PodName:   "run-pod",
		StartTime: &metav1.Time{Time: started},
		Steps:     runpod.StepStates(pod),
	}
	if diff := cmp.Diff(want, run.Status); diff != "" {
		t.Fatalf("first applyStatus() mismatch (-want +got):\n%s", diff)
	}

	// The same observation later changes nothing, so nothing is written.
	before := run.Status.DeepCopy()
	applyStatus(run, running, later, pod, runpod.StepStates(pod), later)
	if !equality.Semantic.DeepEqual(*before, run.Status) {
		t.Errorf("applying the same outcome again changed the status:\n%s", cmp.Diff(*before, run.Status))
	}

	// Finishing keeps startTime and sets completionTime.
	done := withStatus(pod, wrappers.PodStatus(pod).At(started).Succeeded().Obj())
	applyStatus(run, succeeded(), later, done, runpod.StepStates(done), later)
	if got := run.Status.StartTime.Time; !got.Equal(started) {
		t.Errorf("startTime = %s after finishing, want it kept at %s", got, started)
	}
	if run.Status.CompletionTime == nil || !run.Status.CompletionTime.Time.Equal(later) {
		t.Errorf("completionTime = %v, want %s", run.Status.CompletionTime, later)
	}
	if c := run.Status.Conditions[0]; c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(later) {
		t.Errorf("condition = %+v, want True since %s", c, later)
	}
}

func TestApplyStatusWithoutPodKeepsSteps(t *testing.T) {
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Status.PodName = "run-pod"
	run.Status.Steps = []v1.StepState{{Name: "a", State: v1.StepRunning}}
	applyStatus(run, podDeleted("run-pod"), testTime, nil, nil, testTime)
	if diff := cmp.Diff([]v1.StepState{{Name: "a", State: v1.StepRunning}}, run.Status.Steps); diff != "" {
		t.Errorf("steps changed without a Pod (-want +got):\n%s", diff)
	}
}

func TestTruncate(t *testing.T) {
	tests := map[string]struct {
		in   string
		n    int
		want string
	}{
		"fits":             {"hello", 5, "hello"},
		"cut":              {"hello world", 8, "hello..."},
		"on rune boundary": {"héllo", 5, "h..."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := truncate(tc.in, tc.n); got != tc.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
	if got := truncate(strings.Repeat("x", 2*maxConditionMessage), maxConditionMessage); len(got) != maxConditionMessage {
		t.Errorf("truncate() to the condition limit gave %d bytes", len(got))
	}
}

func TestApplyStatusMarksStoppedSteps(t *testing.T) {
	started, now := testTime, testTime.Add(time.Minute)
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(started).Running(1).Obj())
	completed := v1.StepState{
		Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed",
		StartedAt: &metav1.Time{Time: started}, FinishedAt: &metav1.Time{Time: started},
	}
	stopped := func(reason v1.TaskRunReason) []v1.StepState {
		return []v1.StepState{
			completed,
			{Name: "b", State: v1.StepTerminated, Reason: string(reason), StartedAt: &metav1.Time{Time: started}, FinishedAt: &metav1.Time{Time: now}},
			{Name: "c", State: v1.StepTerminated, Reason: string(reason)},
		}
	}
	tests := map[string]struct {
		outcome *outcome
		want    []v1.StepState
	}{
		"cancelled: the running step and those after it stopped": {
			outcome: failed(v1.ReasonCancelled, "cancelled"),
			want:    stopped(v1.ReasonCancelled),
		},
		"timed out: the same, with the timeout as reason": {
			outcome: failed(v1.ReasonTimeout, "timed out"),
			want:    stopped(v1.ReasonTimeout),
		},
		"still running: steps as the kubelet reports them": {
			outcome: unknown(v1.ReasonRunning, "running"),
			want:    runpod.StepStates(pod),
		},
		"failed otherwise: steps as the kubelet reports them": {
			outcome: failed(v1.ReasonPodFailed, "evicted"),
			want:    runpod.StepStates(pod),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			applyStatus(run, tc.outcome, started, pod, runpod.StepStates(pod), now)
			if diff := cmp.Diff(tc.want, run.Status.Steps); diff != "" {
				t.Errorf("status.steps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyStatusWritesResults: results come with the steps, and a run
// whose Pod is gone keeps them as last seen.
func TestApplyStatusWritesResults(t *testing.T) {
	pod := endedResultsPod(1, map[int]string{0: `{"exitCode":0,"results":{"digest":"d"}}`})
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	applyStatus(run, succeeded(), testTime, pod, runpod.StepStates(pod), testTime)
	want := []v1.RunResult{{Name: "digest", Value: ptr.To("d")}}
	if diff := cmp.Diff(want, run.Status.Results); diff != "" {
		t.Errorf("status.results (-want +got):\n%s", diff)
	}
	applyStatus(run, podDeleted("run-pod"), testTime, nil, nil, testTime)
	if diff := cmp.Diff(want, run.Status.Results); diff != "" {
		t.Errorf("status.results once the Pod is gone (-want +got):\n%s", diff)
	}
}
