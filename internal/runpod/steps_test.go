package runpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

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
