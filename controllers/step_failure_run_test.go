package controllers_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStepsThatCannotRun runs steps that a real node ends for good: a script
// step whose image has no shell, as containerd reports it (terminated,
// StartError) and as a runtime that checks when it creates the container
// reports it (waiting, CreateContainerError, made again for ever), and a
// step killed for its memory. Each ends the run StepFailed at once, saying
// why; a Pod that the kubelet would go on with is deleted (no step started)
// once the status says so, and is not retried but by retryOn.
func TestStepsThatCannotRun(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, twoSteps("t"))
	const (
		runcNoShell = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown`
		crunNoShell = "executable file `/bin/sh` not found: No such file or directory"
	)
	tests := map[string]struct {
		run      string
		set      func(*wrappers.PodStatusWrapper)
		want     string
		wantStep v1.StepState
		// podGone says that the controller deletes the Pod, which no
		// step started and the kubelet would go on with.
		podGone bool
	}{
		"no shell, as containerd says it": {
			run:      "containerd",
			set:      func(w *wrappers.PodStatusWrapper) { w.StartError(0, runcNoShell) },
			want:     `step "first" could not run its script: its image "alpine:3" has no shell (/bin/sh): StartError: ` + runcNoShell,
			wantStep: v1.StepState{Name: "first", State: v1.StepTerminated, Reason: v1.StepReasonNoShell},
		},
		"no shell, as a runtime that checks at creation says it: at once, not after --pod-config-timeout": {
			run:      "crun",
			set:      func(w *wrappers.PodStatusWrapper) { w.Waiting(0, "CreateContainerError", crunNoShell) },
			want:     `step "first" could not run its script: its image "alpine:3" has no shell (/bin/sh): CreateContainerError: ` + crunNoShell,
			wantStep: v1.StepState{Name: "first", State: v1.StepTerminated, Reason: v1.StepReasonNoShell},
			podGone:  true,
		},
		"killed for its memory": {
			run:      "oom",
			set:      func(w *wrappers.PodStatusWrapper) { w.OOMKilled(1) },
			want:     `step "second" exited with code 137 (OOMKilled: killed for using too much memory)`,
			wantStep: v1.StepState{Name: "second", State: v1.StepTerminated, Reason: "OOMKilled"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run := tc.run
			h.Create(t, wrappers.TaskRun("", run, "t").Obj())
			h.Kubelet(t, run+"-pod", tc.set)
			got := h.waitForCondition(t, run, condition{metav1.ConditionFalse, v1.ReasonStepFailed, tc.want})
			if len(got.Status.Attempts) != 0 {
				t.Errorf("the failure was retried, though retryOn does not name StepFailed: %+v", got.Status.Attempts)
			}
			found := false
			for _, step := range got.Status.Steps {
				if step.Name == tc.wantStep.Name {
					found = true
					if step.State != tc.wantStep.State || step.Reason != tc.wantStep.Reason {
						t.Errorf("step %q is %s/%s, want %s/%s", step.Name, step.State, step.Reason, tc.wantStep.State, tc.wantStep.Reason)
					}
				}
			}
			if !found {
				t.Errorf("status.steps %+v lacks step %q", got.Status.Steps, tc.wantStep.Name)
			}
			if tc.podGone {
				testenv.Eventually(t, func() (bool, string) {
					return isNotFound(h.Key(run+"-pod"), &corev1.Pod{}), "it still exists"
				}, "Pod %s-pod to be deleted", run)
			}
		})
	}
}
