package controllers

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// threeStepPod is the Pod of run "run" for a Task with steps a, b and c.
func threeStepPod() *corev1.Pod {
	task := wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true").Obj()
	pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, runpod.Inputs{Name: "run-pod"})
	if err != nil {
		panic(err)
	}
	return pod
}

func withStatus(pod *corev1.Pod, status corev1.PodStatus) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status = status
	return pod
}

func TestPodOutcome(t *testing.T) {
	pod := threeStepPod()
	status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
	deleting := withStatus(pod, status().Running(1).Obj())
	deleting.DeletionTimestamp = &metav1.Time{Time: testTime}
	tests := map[string]struct {
		pod  *corev1.Pod
		want *outcome
	}{
		"pending":                {withStatus(pod, status().Obj()), nil},
		"running":                {withStatus(pod, status().Running(2).Obj()), nil},
		"succeeded":              {withStatus(pod, status().Succeeded().Obj()), succeeded()},
		"init failed":            {withStatus(pod, status().StepFailed(1, 3).Obj()), &outcome{metav1.ConditionFalse, v1beta1.ReasonStepFailed, `step "b" exited with code 3`}},
		"last failed":            {withStatus(pod, status().StepFailed(2, 127).Obj()), &outcome{metav1.ConditionFalse, v1beta1.ReasonStepFailed, `step "c" exited with code 127`}},
		"evicted":                {withStatus(pod, status().Evicted(0, "The node was low on resource: memory.").Obj()), &outcome{metav1.ConditionFalse, v1beta1.ReasonPodFailed, `Pod "run-pod" was evicted: The node was low on resource: memory.`}},
		"deadline":               {withStatus(pod, status().DeadlineExceeded(0).Obj()), &outcome{metav1.ConditionFalse, v1beta1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
		"failed, no step failed": {withStatus(pod, corev1.PodStatus{Phase: corev1.PodFailed, Message: "lost"}), &outcome{metav1.ConditionFalse, v1beta1.ReasonPodFailed, `Pod "run-pod" failed: lost`}},
		"deleted while running":  {deleting, &outcome{metav1.ConditionFalse, v1beta1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := podOutcome(tc.pod, stepStates(tc.pod))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("podOutcome() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressOutcome(t *testing.T) {
	pod := threeStepPod()
	tests := map[string]struct {
		status corev1.PodStatus
		want   *outcome
	}{
		"no status yet": {corev1.PodStatus{}, &outcome{metav1.ConditionUnknown, v1beta1.ReasonPending, `Pod "run-pod" has not started a step yet`}},
		"all waiting":   {wrappers.PodStatus(pod).Obj(), &outcome{metav1.ConditionUnknown, v1beta1.ReasonPending, `Pod "run-pod" has not started a step yet`}},
		"first running": {wrappers.PodStatus(pod).Running(0).Obj(), &outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "a" (1 of 3)`}},
		"last running":  {wrappers.PodStatus(pod).Running(2).Obj(), &outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "c" (3 of 3)`}},
		"between steps": {betweenSteps(pod), &outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "b" (2 of 3)`}},
		"later step's image cannot be pulled": {wrappers.PodStatus(pod).At(testTime).CannotPull(1, "ImagePullBackOff", `Back-off pulling image "alpine"`, testTime).Obj(),
			&outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "b" (2 of 3): ImagePullBackOff: Back-off pulling image "alpine"`}},
		"later step's container cannot be made, no message": {wrappers.PodStatus(pod).At(testTime).CannotPull(2, "CreateContainerConfigError", "", testTime).Obj(),
			&outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "c" (3 of 3): CreateContainerConfigError`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := withStatus(pod, tc.status)
			if diff := cmp.Diff(tc.want, progressOutcome(p, stepStates(p), nil), cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("progressOutcome() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// betweenSteps is the status of a Pod whose first step completed and whose
// second has not started yet.
func betweenSteps(pod *corev1.Pod) corev1.PodStatus {
	status := wrappers.PodStatus(pod).Running(1).Obj()
	status.InitContainerStatuses[1].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	return status
}

func TestStepStates(t *testing.T) {
	at := &metav1.Time{Time: testTime}
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(testTime).Running(1).Obj())
	want := []v1beta1.StepState{
		{Name: "a", State: v1beta1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
		{Name: "b", State: v1beta1.StepRunning, StartedAt: at},
		{Name: "c", State: v1beta1.StepWaiting, Reason: "PodInitializing"},
	}
	if diff := cmp.Diff(want, stepStates(pod)); diff != "" {
		t.Errorf("stepStates() mismatch (-want +got):\n%s", diff)
	}

	fresh := threeStepPod()
	wantFresh := []v1beta1.StepState{{Name: "a", State: v1beta1.StepWaiting}, {Name: "b", State: v1beta1.StepWaiting}, {Name: "c", State: v1beta1.StepWaiting}}
	if diff := cmp.Diff(wantFresh, stepStates(fresh)); diff != "" {
		t.Errorf("stepStates() of a Pod without status mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyStatus(t *testing.T) {
	started := testTime
	later := testTime.Add(time.Minute)
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(started).Running(0).Obj())
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Generation = 2

	running := &outcome{metav1.ConditionUnknown, v1beta1.ReasonRunning, `running step "a" (1 of 3)`}
	applyStatus(run, running, started, pod, stepStates(pod), started)
	want := v1beta1.TaskRunStatus{
		Conditions: []metav1.Condition{{
			Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: "Running",
			Message: `running step "a" (1 of 3)`, ObservedGeneration: 2, LastTransitionTime: metav1.Time{Time: started},
		}},
		PodName:   "run-pod",
		StartTime: &metav1.Time{Time: started},
		Steps:     stepStates(pod),
	}
	if diff := cmp.Diff(want, run.Status); diff != "" {
		t.Fatalf("first applyStatus() mismatch (-want +got):\n%s", diff)
	}

	// The same observation later changes nothing, so nothing is written.
	before := run.Status.DeepCopy()
	applyStatus(run, running, later, pod, stepStates(pod), later)
	if !equality.Semantic.DeepEqual(*before, run.Status) {
		t.Errorf("applying the same outcome again changed the status:\n%s", cmp.Diff(*before, run.Status))
	}

	// Finishing keeps startTime and sets completionTime.
	done := withStatus(pod, wrappers.PodStatus(pod).At(started).Succeeded().Obj())
	applyStatus(run, succeeded(), later, done, stepStates(done), later)
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
	run.Status.Steps = []v1beta1.StepState{{Name: "a", State: v1beta1.StepRunning}}
	applyStatus(run, podDeleted("run-pod"), testTime, nil, nil, testTime)
	if diff := cmp.Diff([]v1beta1.StepState{{Name: "a", State: v1beta1.StepRunning}}, run.Status.Steps); diff != "" {
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
	completed := v1beta1.StepState{
		Name: "a", State: v1beta1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed",
		StartedAt: &metav1.Time{Time: started}, FinishedAt: &metav1.Time{Time: started},
	}
	stopped := func(reason v1beta1.TaskRunReason) []v1beta1.StepState {
		return []v1beta1.StepState{
			completed,
			{Name: "b", State: v1beta1.StepTerminated, Reason: string(reason), StartedAt: &metav1.Time{Time: started}, FinishedAt: &metav1.Time{Time: now}},
			{Name: "c", State: v1beta1.StepTerminated, Reason: string(reason)},
		}
	}
	tests := map[string]struct {
		outcome *outcome
		want    []v1beta1.StepState
	}{
		"cancelled: the running step and those after it stopped": {
			outcome: failed(v1beta1.ReasonCancelled, "cancelled"),
			want:    stopped(v1beta1.ReasonCancelled),
		},
		"timed out: the same, with the timeout as reason": {
			outcome: failed(v1beta1.ReasonTimeout, "timed out"),
			want:    stopped(v1beta1.ReasonTimeout),
		},
		"still running: steps as the kubelet reports them": {
			outcome: unknown(v1beta1.ReasonRunning, "running"),
			want:    stepStates(pod),
		},
		"failed otherwise: steps as the kubelet reports them": {
			outcome: failed(v1beta1.ReasonPodFailed, "evicted"),
			want:    stepStates(pod),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			applyStatus(run, tc.outcome, started, pod, stepStates(pod), now)
			if diff := cmp.Diff(tc.want, run.Status.Steps); diff != "" {
				t.Errorf("status.steps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
