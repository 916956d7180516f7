package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// finishedRun is a run that finished at completed, with ttl (nil: none).
func finishedRun(completed time.Time, ttl *int32) *v1.TaskRun {
	at := metav1.NewTime(completed)
	run := wrappers.TaskRun("ns", "run", "t").
		Conditions(metav1.Condition{Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: string(v1.ReasonSucceeded), LastTransitionTime: at}).
		Started(at).Completed(at).Obj()
	run.Spec.TTLSecondsAfterFinished = ttl
	return run
}

// TestDeleteIfExpiredWaits checks the finished runs that are not deleted yet:
// one with a TTL is requeued for the moment it expires, one kept for good is
// never requeued. Neither reaches the API server (the reconciler has no client).
func TestDeleteIfExpiredWaits(t *testing.T) {
	now := testTime
	tests := map[string]struct {
		run        *v1.TaskRun
		defaultTTL time.Duration
		want       ctrl.Result
	}{
		"own TTL, not passed":           {finishedRun(now.Add(-10*time.Second), ptr.To[int32](60)), 0, ctrl.Result{RequeueAfter: 50 * time.Second}},
		"default TTL, not passed":       {finishedRun(now.Add(-10*time.Second), nil), time.Hour, ctrl.Result{RequeueAfter: time.Hour - 10*time.Second}},
		"no TTL: never requeued":        {finishedRun(now.Add(-24*time.Hour), nil), 0, ctrl.Result{}},
		"going on: not this function's": {wrappers.TaskRun("ns", "run", "t").Obj(), time.Second, ctrl.Result{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &TaskRunReconciler{DefaultTTLAfterFinished: tc.defaultTTL, now: func() time.Time { return now }}
			got, err := r.deleteIfExpired(context.Background(), tc.run)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deleteIfExpired() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimmedRunKeepsItsTTL checks that the cache's copy of a finished run
// keeps what its time to live needs, and drops its attempts.
func TestTrimmedRunKeepsItsTTL(t *testing.T) {
	run := finishedRun(testTime, ptr.To[int32](60))
	run.Spec.Retries = ptr.To[int32](1)
	run.Status.Attempts = []v1.Attempt{{PodName: "run-pod", Reason: "PodFailed", Message: "evicted"}}
	trimmed, err := runcache.TrimRun(run.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := trimmed.(*v1.TaskRun)
	want := run.DeepCopy()
	want.Status.Attempts = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cached finished run (-want +got):\n%s", diff)
	}
	wantAt, _ := time.Parse(time.RFC3339, "2026-01-01T12:01:00Z")
	r := &TaskRunReconciler{now: func() time.Time { return testTime }}
	if res, _ := r.deleteIfExpired(context.Background(), got); res.RequeueAfter != wantAt.Sub(testTime) {
		t.Errorf("the trimmed run is requeued after %s, want %s", res.RequeueAfter, wantAt.Sub(testTime))
	}
}
