package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestPendingTooLong(t *testing.T) {
	const pending = 10 * time.Minute
	started := metav1.NewTime(testTime)
	run := func(bound time.Duration, attempts ...string) *v1.TaskRun {
		r := wrappers.TaskRun("ns", "run", "t").Obj()
		if bound != 0 {
			r.Spec.Timeouts.Pending = v1.NewDuration(bound)
		}
		r.Status.StartTime = &started
		return withAttempts(r, attempts...)
	}
	waiting := unknown(v1.ReasonPending, `Pod "run-pod" is waiting to be scheduled`)
	noTask := unknown(v1.ReasonWaitingForTask, `waiting for Task "t", which does not exist`)
	ended := `TaskRun "run" did not start its first step within 10m0s (spec.timeouts.pending): `
	tests := map[string]struct {
		run       *v1.TaskRun
		o         *outcome
		after     time.Duration
		want      *outcome
		wantCheck time.Duration
	}{
		"no bound":                 {run: run(0), o: waiting, after: time.Hour, want: waiting},
		"within the bound":         {run: run(pending), o: waiting, after: 4 * time.Minute, want: waiting, wantCheck: 6 * time.Minute},
		"past it, Pending":         {run: run(pending), o: waiting, after: pending, want: failed(v1.ReasonPendingTimeout, "%s%s", ended, waiting.message)},
		"past it, no Task":         {run: run(pending), o: noTask, after: pending + time.Second, want: failed(v1.ReasonPendingTimeout, "%s%s", ended, noTask.message)},
		"a step runs":              {run: run(pending), o: unknown(v1.ReasonRunning, `running step "a" (1 of 1)`), after: time.Hour, want: unknown(v1.ReasonRunning, `running step "a" (1 of 1)`)},
		"ended otherwise":          {run: run(pending), o: failed(v1.ReasonImagePullFailed, "no image"), after: time.Hour, want: failed(v1.ReasonImagePullFailed, "no image")},
		"a retry waits: not bound": {run: run(pending, "run-pod"), o: unknown(v1.ReasonRetrying, "attempt 2"), after: time.Hour, want: unknown(v1.ReasonRetrying, "attempt 2")},
		"no outcome":               {run: run(pending), o: nil, after: time.Hour, want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &runScope{run: tc.run, now: testTime.Add(tc.after)}
			got := s.pendingTooLong(tc.o)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("pendingTooLong() (-want +got):\n%s", diff)
			}
			if s.recheckIn != tc.wantCheck {
				t.Errorf("recheck in %s, want %s", s.recheckIn, tc.wantCheck)
			}
		})
	}
}
