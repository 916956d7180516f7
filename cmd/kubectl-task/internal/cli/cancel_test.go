package cli_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestCancel(t *testing.T) {
	h := newHarness(t)
	h.Create(t, greetTask("greet"))
	h.startController(t)

	if got := h.kubectlTask(t, "start", "greet", "-p", "greeting=hi", "--name", "greet-cancel"); got.Code != 0 {
		t.Fatalf("start: %+v", got)
	}
	h.Kubelet(t, "greet-cancel-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
	h.waitForSummary(t, "greet-cancel", "Running")

	steps := []struct {
		name string
		want result
		// then is the run's status once the controller has acted.
		then string
	}{
		{
			name: "a running run",
			want: result{Stdout: "TaskRun greet-cancel cancelled: the controller stops its Pod; see kubectl task describe greet-cancel -n NS\n"},
			then: "Failed(TaskRunCancelled)",
		},
		{
			name: "a finished run",
			want: result{Code: 1, Stderr: `error: TaskRun "greet-cancel" has already finished (Failed(TaskRunCancelled)), so there is nothing to cancel; see kubectl task describe greet-cancel -n NS` + "\n"},
			then: "Failed(TaskRunCancelled)",
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			got := h.kubectlTask(t, "cancel", "greet-cancel")
			if diff := cmp.Diff(step.want, got); diff != "" {
				t.Errorf("cancel (-want +got):\n%s", diff)
			}
			run := h.waitForSummary(t, "greet-cancel", step.then)
			if run.Spec.Status != v1.TaskRunSpecStatusCancelled {
				t.Errorf("spec.status = %q, want Cancelled", run.Spec.Status)
			}
		})
	}
}

// TestCancelWithoutController covers what cancel decides alone: a run already
// being cancelled, a run that succeeded, and an unknown run.
func TestCancelWithoutController(t *testing.T) {
	h := newHarness(t)
	h.history(t)
	tests := []struct {
		name, run string
		want      result
	}{
		{"a running run", "greet-running", result{Stdout: "TaskRun greet-running cancelled: the controller stops its Pod; see kubectl task describe greet-running -n NS\n"}},
		{"again, before the controller acts", "greet-running", result{Stdout: "TaskRun greet-running is already being cancelled\n"}},
		{"a run that succeeded", "greet-old", result{Code: 1, Stderr: `error: TaskRun "greet-old" has already finished (Succeeded), so there is nothing to cancel; see kubectl task describe greet-old -n NS` + "\n"}},
		{"an unknown run", "nope", result{Code: 1, Stderr: `error: TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS` + "\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, h.kubectlTask(t, "cancel", tc.run)); diff != "" {
				t.Errorf("cancel %s (-want +got):\n%s", tc.run, diff)
			}
		})
	}
	if got := h.TaskRun(t, "greet-running").Spec.Status; got != v1.TaskRunSpecStatusCancelled {
		t.Errorf("greet-running's spec.status = %q, want Cancelled", got)
	}
	if got := h.kubectlTask(t, "list", "greet").Stdout; !regexpMatch(`\ngreet-running +greet +30s ago +--- +Cancelling\n`, got) {
		t.Errorf("list shows no Cancelling run:\n%s", got)
	}
}
