package runstate_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

var start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestTimeout(t *testing.T) {
	tests := map[string]struct {
		timeout *v1.Duration
		def     time.Duration
		want    time.Duration
	}{
		"the run's own":           {v1.NewDuration(time.Minute), time.Hour, time.Minute},
		"the run's 0s: none":      {v1.NewDuration(0), time.Hour, 0},
		"absent: the default":     {nil, time.Hour, time.Hour},
		"absent, no default":      {nil, 0, 0},
		"negative counts as none": {v1.NewDuration(-time.Minute), time.Hour, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{Spec: v1.TaskRunSpec{Timeouts: v1.Timeouts{Total: tc.timeout}}}
			if got := runstate.Timeout(run, tc.def); got != tc.want {
				t.Errorf("Timeout() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	type want struct {
		Passed, StoppedPod bool
		RecheckIn          time.Duration
	}
	tests := map[string]struct {
		timeout time.Duration
		now     time.Time
		want    want
	}{
		"no timeout":                  {0, start.Add(100 * time.Hour), want{}},
		"just started":                {time.Hour, start, want{RecheckIn: time.Hour}},
		"well before the deadline":    {time.Hour, start.Add(30 * time.Minute), want{RecheckIn: 30 * time.Minute}},
		"the kubelet's count is near": {time.Hour, start.Add(time.Hour - 2*time.Second), want{StoppedPod: true, RecheckIn: 2 * time.Second}},
		"at the deadline":             {time.Hour, start.Add(time.Hour), want{Passed: true, StoppedPod: true, RecheckIn: time.Second}},
		"past the deadline":           {time.Hour, start.Add(2 * time.Hour), want{Passed: true, StoppedPod: true, RecheckIn: time.Second}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := runstate.DeadlineFor(start, tc.timeout)
			got := want{d.Passed(tc.now), d.StoppedPod(tc.now), d.RecheckIn(tc.now)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			at, ok := d.Time()
			if wantAt := start.Add(tc.timeout); ok != (tc.timeout > 0) || (ok && !at.Equal(wantAt)) {
				t.Errorf("Time() = %s, %t, want %s, %t", at, ok, wantAt, tc.timeout > 0)
			}
		})
	}
}

func TestActiveDeadlineSeconds(t *testing.T) {
	tests := map[string]struct {
		timeout time.Duration
		now     time.Time
		want    *int64
	}{
		"no timeout":             {0, start, nil},
		"whole timeout left":     {time.Hour, start, ptr.To[int64](3600)},
		"part of a second left":  {time.Hour, start.Add(time.Hour - 1500*time.Millisecond), ptr.To[int64](2)},
		"deadline passed":        {time.Hour, start.Add(time.Hour + time.Minute), ptr.To[int64](1)},
		"beyond the API's range": {1 << 62, start, ptr.To[int64](math.MaxInt32)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := runstate.DeadlineFor(start, tc.timeout).ActiveDeadlineSeconds(tc.now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ActiveDeadlineSeconds() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoppingDeadlineSeconds(t *testing.T) {
	for elapsed, want := range map[time.Duration]int64{90*time.Second + 700*time.Millisecond: 90, 200 * time.Millisecond: 1, 0: 1} {
		if got := runstate.StoppingDeadlineSeconds(start, start.Add(elapsed)); got != want {
			t.Errorf("StoppingDeadlineSeconds(%s after start) = %d, want %d", elapsed, got, want)
		}
	}
}

func TestExpiresAt(t *testing.T) {
	finished := func(status metav1.ConditionStatus, completion *metav1.Time) v1.TaskRunStatus {
		return v1.TaskRunStatus{
			Conditions:     []metav1.Condition{{Type: v1.ConditionSucceeded, Status: status, LastTransitionTime: metav1.NewTime(start.Add(time.Minute))}},
			CompletionTime: completion,
		}
	}
	completed := &metav1.Time{Time: start}
	type want struct {
		At      time.Time
		Deleted bool
	}
	tests := map[string]struct {
		ttl    *int32
		def    time.Duration
		status v1.TaskRunStatus
		want   want
	}{
		"own TTL":                         {ptr.To[int32](60), 0, finished(metav1.ConditionTrue, completed), want{start.Add(time.Minute), true}},
		"own TTL wins over the default":   {ptr.To[int32](60), time.Hour, finished(metav1.ConditionFalse, completed), want{start.Add(time.Minute), true}},
		"own 0: at once":                  {ptr.To[int32](0), time.Hour, finished(metav1.ConditionTrue, completed), want{start, true}},
		"the default":                     {nil, time.Hour, finished(metav1.ConditionTrue, completed), want{start.Add(time.Hour), true}},
		"no TTL, default 0: kept":         {nil, 0, finished(metav1.ConditionTrue, completed), want{}},
		"going on: never":                 {ptr.To[int32](0), time.Hour, finished(metav1.ConditionUnknown, nil), want{}},
		"not seen: never":                 {ptr.To[int32](0), time.Hour, v1.TaskRunStatus{}, want{}},
		"finished without completionTime": {ptr.To[int32](60), 0, finished(metav1.ConditionFalse, nil), want{start.Add(2 * time.Minute), true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{Spec: v1.TaskRunSpec{TTLSecondsAfterFinished: tc.ttl}, Status: tc.status}
			at, ok := runstate.ExpiresAt(run, tc.def)
			if diff := cmp.Diff(tc.want, want{at, ok}); diff != "" {
				t.Errorf("ExpiresAt() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
