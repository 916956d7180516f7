package runpod

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// testTime is when the Pods of these tests were taken up, or their steps ran.
var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// podFor is the Pod "run-pod" of run "run" for task, as Build makes it.
func podFor(task *v1.Task) *corev1.Pod {
	pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, Inputs{Name: "run-pod"})
	if err != nil {
		panic(err)
	}
	return pod
}

// threeStepPod is the Pod of run "run" for a Task with script steps a, b and c.
func threeStepPod() *corev1.Pod {
	return podFor(wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true").Obj())
}

// withStatus is a copy of pod with status.
func withStatus(pod *corev1.Pod, status corev1.PodStatus) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status = status
	return pod
}

func TestNeverStarted(t *testing.T) {
	pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(),
		wrappers.Task("ns", "t").Step("a", "alpine", "").Step("b", "alpine", "").Obj(), Inputs{Name: "run-pod"})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		status corev1.PodStatus
		want   bool
	}{
		"not taken up by a kubelet": {corev1.PodStatus{Phase: corev1.PodPending}, true},
		"every container waits":     {wrappers.PodStatus(pod).Obj(), true},
		"first step running":        {wrappers.PodStatus(pod).Running(0).Obj(), false},
		"second step running":       {wrappers.PodStatus(pod).Running(1).Obj(), false},
		"first step failed":         {wrappers.PodStatus(pod).StepFailed(0, 1).Obj(), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Status = tc.status
			if got := NeverStarted(p); got != tc.want {
				t.Errorf("NeverStarted() = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestStepStates(t *testing.T) {
	at := &metav1.Time{Time: testTime}
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(testTime).Running(1).Obj())
	want := []v1.StepState{
		{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
		{Name: "b", State: v1.StepRunning, StartedAt: at},
		{Name: "c", State: v1.StepWaiting, Reason: "PodInitializing"},
	}
	if diff := cmp.Diff(want, StepStates(pod)); diff != "" {
		t.Errorf("StepStates() mismatch (-want +got):\n%s", diff)
	}

	fresh := threeStepPod()
	wantFresh := []v1.StepState{{Name: "a", State: v1.StepWaiting}, {Name: "b", State: v1.StepWaiting}, {Name: "c", State: v1.StepWaiting}}
	if diff := cmp.Diff(wantFresh, StepStates(fresh)); diff != "" {
		t.Errorf("StepStates() of a Pod without status mismatch (-want +got):\n%s", diff)
	}
}
