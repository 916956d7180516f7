package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestResultsAndOnError runs Tasks with results and onError: continue
// through the API server, playing the kubelet: every step ends, each with
// the exit code and termination message a case gives it, as the kubelet
// reports them (containerStatuses[].state.terminated). The controller reads
// them back from its cache's trimmed Pods.
func TestResultsAndOnError(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)

	// Every case's Task declares version and digest, in that order, and has
	// a script step "fetch", a command step "tool" and a script step
	// "report", which onError: continue lets fail.
	task := func(name string) *v1.Task {
		task := wrappers.Task("", name).Steps(
			v1.Step{Name: "fetch", Image: "alpine:3", Script: "printf 1.0 > $(results.version.path)"},
			v1.Step{Name: "tool", Image: "tool:1", Command: []string{"tool", "--digest-to=$(results.digest.path)"}},
			v1.Step{Name: "report", Image: "alpine:3", Script: "cat $(results.digest.path); exit 3", OnError: v1.OnErrorContinue},
		).Obj()
		task.Spec.Results = []v1.ResultDeclaration{{Name: "version"}, {Name: "digest"}}
		return task
	}
	digestOf := func(n int) string { return strings.Repeat("d", n) }
	// A message of exactly 4097 bytes: the wrapper's JSON around one value.
	tooLarge := fmt.Sprintf(`{"exitCode":0,"results":{"digest":"%s"}}`, digestOf(runstate.MaxTerminationMessage+1-len(`{"exitCode":0,"results":{"digest":""}}`)))
	if len(tooLarge) != runstate.MaxTerminationMessage+1 {
		t.Fatalf("the too large message has %d bytes", len(tooLarge))
	}

	tests := map[string]struct {
		// ends are each step's exit code and termination message, by step.
		ends        [3]stepEnd
		want        condition
		wantResults []v1.RunResult
		wantSteps   []string
	}{
		"results-in-order": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"digest":"sha256:old","version":"1.0"}}`},
				{0, ""},
				{0, `{"exitCode":0,"results":{"digest":"sha256:new"}}`},
			},
			want:        condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantResults: []v1.RunResult{{Name: "version", Value: ptr.To("1.0")}, {Name: "digest", Value: ptr.To("sha256:new")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=0/Completed"},
		},
		"too-large": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"version":"1.0"}}`},
				{0, ""},
				{0, tooLarge},
			},
			want: condition{metav1.ConditionFalse, v1.ReasonResultsTooLarge,
				`step "report"'s results do not fit its termination message: it holds 4097 bytes, over the limit of 4096 bytes; write less to $(results.NAME.path), or hand large values over in a workspace`},
			wantResults: []v1.RunResult{{Name: "version", Value: ptr.To("1.0")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=0/Completed"},
		},
		"too-large-reported": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"version":"1.0"}}`},
				{0, ""},
				{0, `{"exitCode":3,"results":{},"resultsTooLarge":{"size":6000,"limit":4096,"cut":false}}`},
			},
			want: condition{metav1.ConditionFalse, v1.ReasonResultsTooLarge,
				`step "report"'s results do not fit its termination message: they take 6000 bytes, over the limit of 4096 bytes for each step of a Pod of 3 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`},
			wantResults: []v1.RunResult{{Name: "version", Value: ptr.To("1.0")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=3/Continued"},
		},
		"continued": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"version":"1.0"}}`},
				{0, ""},
				{0, `{"exitCode":3,"results":{"version":"1.0"}}`},
			},
			want:        condition{metav1.ConditionTrue, v1.ReasonSucceeded, `every step exited 0 or was let pass by onError: continue ("report" exited with code 3)`},
			wantResults: []v1.RunResult{{Name: "version", Value: ptr.To("1.0")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=3/Continued"},
		},
		"command-step-message-ignored": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"digest":"sha256:1"}}`},
				{0, `{"exitCode":7,"results":{"digest":"forged","version":"forged"}}`},
				{0, `{"exitCode":0,"results":{}}`},
			},
			want:        condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantResults: []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:1")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=0/Completed"},
		},
		"command-step-text-ignored": {
			ends: [3]stepEnd{
				{0, `{"exitCode":0,"results":{"version":"2"}}`},
				{0, strings.Repeat("tool says: done\n", 300)[:4096]},
				{0, `{"exitCode":0,"results":{}}`},
			},
			want:        condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantResults: []v1.RunResult{{Name: "version", Value: ptr.To("2")}},
			wantSteps:   []string{"fetch=0/Completed", "tool=0/Completed", "report=0/Completed"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h.Create(t, task(name), wrappers.TaskRun("", name, name).Obj())
			h.Kubelet(t, name+"-pod", func(w *wrappers.PodStatusWrapper) {
				w.Succeeded()
				for i, end := range tc.ends {
					w.Ended(i, end.code, end.message)
				}
			})
			run := h.waitForCondition(t, name, tc.want)
			if diff := cmp.Diff(tc.wantResults, run.Status.Results); diff != "" {
				t.Errorf("status.results (-want +got):\n%s", diff)
			}
			var steps []string
			for _, s := range run.Status.Steps {
				steps = append(steps, fmt.Sprintf("%s=%d/%s", s.Name, ptr.Deref(s.ExitCode, -1), s.Reason))
			}
			if diff := cmp.Diff(tc.wantSteps, steps); diff != "" {
				t.Errorf("status.steps (-want +got):\n%s", diff)
			}
		})
	}
}

// stepEnd is how the kubelet reports that a step ended.
type stepEnd struct {
	code    int32
	message string
}
