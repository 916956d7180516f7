package rundecision

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestApplyStatus follows one run's status through the reconciles of its
// life: running, the same again later, then finished.
func TestApplyStatus(t *testing.T) {
	started := testTime
	later := testTime.Add(time.Minute)
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(started).Running(0).Obj())
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Generation = 2

	running := &Outcome{metav1.ConditionUnknown, v1.ReasonRunning, `running step "a" (1 of 3)`}
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

// TestAttemptApplyStatus checks the status an attempt writes: the outcome
// as the condition, in whole seconds, the start it worked out, and a message
// cut to what the API accepts.
func TestAttemptApplyStatus(t *testing.T) {
	now := testTime.Add(1500 * time.Millisecond)
	at := func(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
	condition := func(o *Outcome, since time.Time) []metav1.Condition {
		return []metav1.Condition{{Type: v1.ConditionSucceeded, Status: o.Status, Reason: string(o.Reason), Message: o.Message,
			ObservedGeneration: 3, LastTransitionTime: metav1.Time{Time: since}}}
	}
	waiting := WaitingForTask(wrappers.TaskRun("ns", "run", "t").Obj())
	long := Failed(v1.ReasonPodFailed, "%s", strings.Repeat("x", 2*MaxConditionMessage))
	cut := Failed(v1.ReasonPodFailed, "%s...", strings.Repeat("x", MaxConditionMessage-3))
	tests := map[string]struct {
		status  v1.TaskRunStatus
		outcome *Outcome
		want    v1.TaskRunStatus
	}{
		"new run waiting for its Task: started now, in whole seconds": {
			outcome: waiting,
			want:    v1.TaskRunStatus{StartTime: at(testTime.Add(time.Second)), Conditions: condition(waiting, testTime.Add(time.Second))},
		},
		"ended: completed now, the start kept": {
			status:  v1.TaskRunStatus{StartTime: at(testTime.Add(-time.Hour))},
			outcome: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`),
			want: v1.TaskRunStatus{StartTime: at(testTime.Add(-time.Hour)), CompletionTime: at(testTime.Add(time.Second)),
				Conditions: condition(Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`), testTime.Add(time.Second))},
		},
		"a message too long for the API: cut": {
			status:  v1.TaskRunStatus{StartTime: at(testTime)},
			outcome: long,
			want:    v1.TaskRunStatus{StartTime: at(testTime), CompletionTime: at(testTime.Add(time.Second)), Conditions: condition(cut, testTime.Add(time.Second))},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			run.Generation, run.Status = 3, tc.status
			a := attemptOf(run, nil, now)
			a.Outcome = tc.outcome
			a.ApplyStatus()
			if diff := cmp.Diff(tc.want, run.Status); diff != "" {
				t.Errorf("ApplyStatus() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyStatusWithoutPodKeepsSteps(t *testing.T) {
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Status.PodName = "run-pod"
	run.Status.Steps = []v1.StepState{{Name: "a", State: v1.StepRunning}}
	applyStatus(run, PodDeleted("run-pod"), testTime, nil, nil, testTime)
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
		"fits":                        {"hello", 5, "hello"},
		"cut":                         {"hello world", 8, "hello..."},
		"on rune boundary":            {"héllo", 5, "h..."},
		"to the condition's limit":    {strings.Repeat("x", 2*MaxConditionMessage), MaxConditionMessage, strings.Repeat("x", MaxConditionMessage-3) + "..."},
		"exactly the condition limit": {strings.Repeat("é", MaxConditionMessage/2), MaxConditionMessage, strings.Repeat("é", MaxConditionMessage/2)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Truncate(tc.in, tc.n)); diff != "" {
				t.Errorf("Truncate(%.20q, %d) mismatch (-want +got):\n%s", tc.in, tc.n, diff)
			}
		})
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
		outcome *Outcome
		want    []v1.StepState
	}{
		"cancelled: the running step and those after it stopped": {
			outcome: Failed(v1.ReasonCancelled, "cancelled"),
			want:    stopped(v1.ReasonCancelled),
		},
		"timed out: the same, with the timeout as reason": {
			outcome: Failed(v1.ReasonTimeout, "timed out"),
			want:    stopped(v1.ReasonTimeout),
		},
		"an image not pulled: the same": {
			outcome: Failed(v1.ReasonImagePullFailed, "no image"),
			want:    stopped(v1.ReasonImagePullFailed),
		},
		"a configuration the kubelet cannot meet: the same": {
			outcome: Failed(v1.ReasonPodConfigFailed, "no Secret"),
			want:    stopped(v1.ReasonPodConfigFailed),
		},
		"still running: steps as the kubelet reports them": {
			outcome: Unknown(v1.ReasonRunning, "running"),
			want:    runpod.StepStates(pod),
		},
		"failed otherwise: steps as the kubelet reports them": {
			outcome: Failed(v1.ReasonPodFailed, "evicted"),
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
	applyStatus(run, PodDeleted("run-pod"), testTime, nil, nil, testTime)
	if diff := cmp.Diff(want, run.Status.Results); diff != "" {
		t.Errorf("status.results once the Pod is gone (-want +got):\n%s", diff)
	}
}
