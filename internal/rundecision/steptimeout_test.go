package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestCommandStepTimeout: a step without a script has no wrapper to stop
// it, so the decisions do: before its timeout the run is looked at again
// when it passes, after it the run ends StepTimedOut, its Pod stopped, and
// the step is reported stopped for its timeout.
func TestCommandStepTimeout(t *testing.T) {
	started := testTime.Add(-40 * time.Second)
	tests := map[string]struct {
		timeout     time.Duration
		want        *Outcome
		wantRecheck time.Duration
	}{
		"before its timeout: looked at again when it passes": {timeout: time.Minute, wantRecheck: 20 * time.Second},
		"past its timeout": {
			timeout: 30 * time.Second,
			want:    &Outcome{metav1.ConditionFalse, v1.ReasonStepTimedOut, `step "fetch" timed out after 30s`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := commandStepPod(tc.timeout)
			pod = withStatus(pod, wrappers.PodStatus(pod).At(started).Running(0).Obj())
			run := withPodName(wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour).Started(metav1.NewTime(started)).Obj(), "run-pod")
			a := attemptOf(run, pod, testTime)
			got := a.StopRequested()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("StopRequested() mismatch (-want +got):\n%s", diff)
			}
			if got == nil {
				if a.RequeueAfter() != tc.wantRecheck {
					t.Errorf("RequeueAfter() = %v, want %v", a.RequeueAfter(), tc.wantRecheck)
				}
				return
			}
			a.Outcome = got
			a.ApplyStatus()
			step := a.Run.Status.Steps[0]
			if step.State != v1.StepTerminated || step.Reason != v1.StepReasonTimedOut || step.FinishedAt == nil {
				t.Errorf("the timed-out step is reported %+v, want Terminated, TimedOut, with its end", step)
			}
			if next := a.Run.Status.Steps[1]; next.State != v1.StepWaiting {
				t.Errorf("the step after it is reported %+v, want it still waiting", next)
			}
		})
	}
}
