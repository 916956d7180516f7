package runpod

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// chainedPod is the chained Pod of run "run" for a Task of script steps a,
// b and c, b's onError continue, with phase and one container state a step,
// in order.
func chainedPod(phase corev1.PodPhase, states ...corev1.ContainerState) *corev1.Pod {
	task := wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "a", Image: "alpine", Script: "true"},
		v1.Step{Name: "b", Image: "alpine", Script: "true", OnError: v1.OnErrorContinue},
		v1.Step{Name: "c", Image: "alpine", Script: "true"},
	).Obj()
	pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, Inputs{Name: "run-pod", Chained: true})
	if err != nil {
		panic(err)
	}
	if !runstate.Chained(pod) || len(pod.Spec.InitContainers) != 0 {
		panic("Build did not chain the Pod")
	}
	pod.Status = corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: testTime}}
	for i, s := range states {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: pod.Spec.Containers[i].Name, Image: pod.Spec.Containers[i].Image, State: s})
	}
	return pod
}

// at is testTime plus seconds.
func at(seconds int) metav1.Time {
	return metav1.Time{Time: testTime.Add(time.Duration(seconds) * time.Second)}
}

func running(startedAt int) corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(startedAt)}}
}

// containerEnded is a container, started with the Pod, that ended at
// finishedAt with code and message.
func containerEnded(code int32, message string, finishedAt int) corev1.ContainerState {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message,
		StartedAt: at(0), FinishedAt: at(finishedAt)}}
}

// withTimes is a passed step's message saying that its script ran from
// testTime plus startedAt seconds to plus finishedAt.
func withTimes(startedAt, finishedAt int) string {
	return fmt.Sprintf(`{"exitCode":0,"startedAt":%d,"finishedAt":%d,"results":{}}`, at(startedAt).Unix(), at(finishedAt).Unix())
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "it waits"}}
}

// TestChainedStepStates reads chained Pods' steps: a step runs only once
// every step before it passed, from when the step before ended; a step
// after a failed one never started, whatever its container did.
func TestChainedStepStates(t *testing.T) {
	passed := `{"exitCode":0,"results":{}}`
	tp := func(seconds int) *metav1.Time { t := at(seconds); return &t }
	// everyStepPassed is the steps of a Pod whose containers ended 0 at
	// 1, 2 and 3 s, each step from the end of the one before.
	everyStepPassed := []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(0), FinishedAt: tp(1)},
		{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(1), FinishedAt: tp(2)},
		{Name: "c", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(2), FinishedAt: tp(3)}}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		want      []v1.StepState
		outcome   *Condition
		never     bool
		whileRuns bool
	}{
		{
			name: "every container runs: the first step does, the others wait for their turn",
			pod:  chainedPod(corev1.PodRunning, running(0), running(0), running(0)),
			want: []v1.StepState{{Name: "a", State: v1.StepRunning, StartedAt: tp(0)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
		},
		{
			name: "the second step began when the first ended, not when its container started",
			pod:  chainedPod(corev1.PodRunning, containerEnded(0, passed, 5), running(0), running(0)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepRunning, StartedAt: tp(5)}, {Name: "c", State: v1.StepWaiting}},
		},
		{
			name: "onError continue lets the next step run, with the script's own code",
			pod:  chainedPod(corev1.PodRunning, containerEnded(0, passed, 5), containerEnded(0, `{"exitCode":2,"results":{}}`, 7), running(1)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](2), Reason: v1.StepReasonContinued, StartedAt: tp(5), FinishedAt: tp(7)},
				{Name: "c", State: v1.StepRunning, StartedAt: tp(7)}},
		},
		{
			// The kubelet recorded a's end after b's command had begun,
			// and b's after c's: the wrappers' times say when each
			// command ran; c's message has none (an image without date).
			name: "the steps' times are their scripts', as their messages say",
			pod: chainedPod(corev1.PodSucceeded,
				containerEnded(0, withTimes(0, 4), 6), containerEnded(0, withTimes(4, 5), 6), containerEnded(0, passed, 7)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(0), FinishedAt: tp(4)},
				{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(4), FinishedAt: tp(5)},
				{Name: "c", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: tp(5), FinishedAt: tp(7)}},
			outcome: succeeded(),
		},
		{
			name: "a failed step: the steps after it were skipped and never started",
			pod:  chainedPod(corev1.PodFailed, containerEnded(3, `{"exitCode":3,"results":{}}`, 5), containerEnded(0, runstate.SkippedMessage, 5), containerEnded(0, runstate.SkippedMessage, 5)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](3), Reason: "Error", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
			outcome: failed(v1.ReasonStepFailed, `step "a" exited with code 3`),
		},
		{
			name: "a failed step while the others still wait: the run has failed",
			pod:  chainedPod(corev1.PodRunning, containerEnded(137, "", 5), running(0), running(0)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](137), Reason: "Error", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
			outcome:   failed(v1.ReasonStepFailed, `step "a" exited with code 137`),
			whileRuns: true,
		},
		{
			name: "stopped while waiting: the Pod's deadline killed the waiting steps",
			pod:  chainedPod(corev1.PodFailed, containerEnded(143, `{"exitCode":143,"results":{}}`, 5), containerEnded(143, "", 5), containerEnded(143, "", 5)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](143), Reason: "Error", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
			outcome: failed(v1.ReasonStepFailed, `step "a" exited with code 143`),
		},
		{
			name: "a later step's image cannot be pulled: it waits with the kubelet's reason",
			pod:  chainedPod(corev1.PodPending, running(0), running(0), waiting("ImagePullBackOff")),
			want: []v1.StepState{{Name: "a", State: v1.StepRunning, StartedAt: tp(0)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting, Reason: "ImagePullBackOff"}},
		},
		{
			name: "the first step's image cannot be pulled: no step started",
			pod:  chainedPod(corev1.PodPending, waiting("ErrImagePull"), running(0), running(0)),
			want: []v1.StepState{{Name: "a", State: v1.StepWaiting, Reason: "ErrImagePull"},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
			never: true,
		},
		{
			name: "a later script step's image has no shell: it fails at once",
			pod: chainedPod(corev1.PodRunning, running(0), running(0), corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 128, Reason: "StartError", Message: `exec: "/bin/sh": stat /bin/sh: no such file or directory`, FinishedAt: at(0)}}),
			want: []v1.StepState{{Name: "a", State: v1.StepRunning, StartedAt: tp(0)},
				{Name: "b", State: v1.StepWaiting},
				{Name: "c", State: v1.StepTerminated, ExitCode: ptr.To[int32](128), Reason: v1.StepReasonNoShell, FinishedAt: tp(0)}},
			whileRuns: true,
		},
		{
			name:    "every step passed, the Pod's phase not yet updated: the run has succeeded",
			pod:     chainedPod(corev1.PodRunning, containerEnded(0, passed, 1), containerEnded(0, passed, 2), containerEnded(0, passed, 3)),
			want:    everyStepPassed,
			outcome: succeeded(),
		},
		{
			name: "a failed step and the skipped ones ended, the Pod's phase not yet updated: the kubelet ends the Pod itself",
			pod:  chainedPod(corev1.PodRunning, containerEnded(3, `{"exitCode":3,"results":{}}`, 5), containerEnded(0, runstate.SkippedMessage, 5), containerEnded(0, runstate.SkippedMessage, 5)),
			want: []v1.StepState{{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](3), Reason: "Error", StartedAt: tp(0), FinishedAt: tp(5)},
				{Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}},
			outcome: failed(v1.ReasonStepFailed, `step "a" exited with code 3`),
		},
		{
			name:    "every step passed",
			pod:     chainedPod(corev1.PodSucceeded, containerEnded(0, passed, 1), containerEnded(0, passed, 2), containerEnded(0, passed, 3)),
			want:    everyStepPassed,
			outcome: succeeded(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := StepStates(tt.pod)
			if diff := cmp.Diff(tt.want, steps); diff != "" {
				t.Errorf("StepStates() (-want +got):\n%s", diff)
			}
			if got := NeverStarted(tt.pod); got != tt.never {
				t.Errorf("NeverStarted() = %t, want %t", got, tt.never)
			}
			if got := FailedWhileRunning(tt.pod); got != tt.whileRuns {
				t.Errorf("FailedWhileRunning() = %t, want %t", got, tt.whileRuns)
			}
			if tt.outcome == nil {
				return
			}
			if diff := cmp.Diff(tt.outcome, Outcome(tt.pod, steps)); diff != "" {
				t.Errorf("Outcome() (-want +got):\n%s", diff)
			}
		})
	}
}
