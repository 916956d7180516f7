package runpod

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStepTimedOut reads the Pods of runs whose script step ran past its
// timeout, as its wrapper ends it (internal/stepscript): the step says it
// timed out, with its script's own code, and the run fails StepTimedOut,
// naming the step and the timeout, unless onError: continue let it pass.
func TestStepTimedOut(t *testing.T) {
	timedOut := func(code int) string {
		return `{"exitCode":` + strconv.Itoa(code) + `,"timedOut":true,"timeoutSeconds":600,"results":{}}`
	}
	task := func(onError v1.OnError) *v1.Task {
		return wrappers.Task("ns", "t").Steps(
			v1.Step{Name: "a", Image: "alpine", Script: "true"},
			v1.Step{Name: "b", Image: "alpine", Script: "sleep 900", OnError: onError, Timeout: v1.NewDuration(10 * time.Minute)},
			v1.Step{Name: "c", Image: "alpine", Script: "true"},
		).Obj()
	}
	stopped := podFor(task(""))
	continued := podFor(task(v1.OnErrorContinue))
	tests := map[string]struct {
		pod      *corev1.Pod
		wantStep v1.StepState
		want     *Condition
	}{
		"stopAndFail: the trap's code, the run fails": {
			pod: withStatus(stopped, wrappers.PodStatus(stopped).At(testTime).StepFailed(1, 3).Ended(1, 3, timedOut(3)).Obj()),
			wantStep: v1.StepState{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](3), Reason: v1.StepReasonTimedOut,
				StartedAt: &metav1.Time{Time: testTime}, FinishedAt: &metav1.Time{Time: testTime}},
			want: &Condition{Status: metav1.ConditionFalse, Reason: v1.ReasonStepTimedOut, Message: `step "b" timed out after 10m0s`},
		},
		"stopAndFail, a trap that exited 0: its container's 143 fails the run": {
			pod: withStatus(stopped, wrappers.PodStatus(stopped).At(testTime).StepFailed(1, 143).Ended(1, 143, timedOut(0)).Obj()),
			wantStep: v1.StepState{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: v1.StepReasonTimedOut,
				StartedAt: &metav1.Time{Time: testTime}, FinishedAt: &metav1.Time{Time: testTime}},
			want: &Condition{Status: metav1.ConditionFalse, Reason: v1.ReasonStepTimedOut, Message: `step "b" timed out after 10m0s`},
		},
		"onError continue: the run goes on, and succeeds saying so": {
			pod: withStatus(continued, wrappers.PodStatus(continued).At(testTime).Succeeded().Ended(1, 0, timedOut(143)).Obj()),
			wantStep: v1.StepState{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](143), Reason: v1.StepReasonTimedOut,
				StartedAt: &metav1.Time{Time: testTime}, FinishedAt: &metav1.Time{Time: testTime}},
			want: &Condition{Status: metav1.ConditionTrue, Reason: v1.ReasonSucceeded,
				Message: `every step exited 0 or was let pass by onError: continue ("b" timed out after 10m0s)`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			steps := StepStates(tc.pod)
			if diff := cmp.Diff(tc.wantStep, steps[1]); diff != "" {
				t.Errorf("StepStates()[1] mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, Outcome(tc.pod, steps)); diff != "" {
				t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChainedStepTimedOut: in a chained Pod, a step that timed out fails
// the run while the containers after it still end (skipped).
func TestChainedStepTimedOut(t *testing.T) {
	message := `{"exitCode":143,"timedOut":true,"timeoutSeconds":60,"results":{}}`
	pod := chainedPod(corev1.PodRunning, containerEnded(143, message, 60), running(0), running(0))
	steps := StepStates(pod)
	if steps[0].Reason != v1.StepReasonTimedOut || steps[1].State != v1.StepWaiting {
		t.Errorf("steps %+v, want the first timed out and the second waiting", steps)
	}
	want := &Condition{Status: metav1.ConditionFalse, Reason: v1.ReasonStepTimedOut, Message: `step "a" timed out after 1m0s`}
	if diff := cmp.Diff(want, Outcome(pod, steps)); diff != "" {
		t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
	}
	if !FailedWhileRunning(pod) {
		t.Error("FailedWhileRunning() = false: the controller would leave the Pod running")
	}
}
