package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These test the stages that need no API server: they decide from the run,
// its Pod and the clock alone.

func TestFinishIfPodEnded(t *testing.T) {
	start := testTime
	pod := threeStepPod()
	stoppedAtDeadline := withStatus(pod, wrappers.PodStatus(pod).At(start).DeadlineExceeded(1).Obj())
	deleting := func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		p.DeletionTimestamp = &metav1.Time{Time: start.Add(time.Minute)}
		return p
	}
	cancelledRun := &outcome{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "run" was cancelled`}
	timedOutRun := &outcome{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "run" did not finish within 1h0m0s`}
	podGone := &outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour) }
	tests := map[string]struct {
		run  *v1.TaskRun
		pod  *corev1.Pod
		now  time.Time
		want *outcome
	}{
		"no Pod yet": {run().Obj(), nil, start, nil},
		"Pod gone": {withPodName(run().Obj(), "run-pod"), nil, start,
			&outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}},
		"retry's Pod not created yet": {withAttempts(withPodName(run().Obj(), "run-pod"), "run-pod"), nil, start, nil},
		"retry's Pod gone": {withAttempts(withPodName(run().Obj(), "run-pod-retry1"), "run-pod"), nil, start,
			&outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod-retry1" was deleted before the run finished`}},
		"Pod running": {run().Obj(), withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj()), start, nil},
		"run's own deadline": {run().Obj(), stoppedAtDeadline, start.Add(time.Hour - 2*time.Second),
			&outcome{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "run" did not finish within 1h0m0s`}},
		"deadline lowered for a cancel": {run().Cancelled().Obj(), stoppedAtDeadline, start.Add(time.Minute),
			&outcome{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "run" was cancelled`}},
		"deadline someone else set": {run().Obj(), stoppedAtDeadline, start.Add(time.Minute),
			&outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
		// A reconcile that stopped the Pod and could not write why: the next
		// one must not call the stop a Pod failure.
		"deleted for a cancel":                  {withPodName(run().Cancelled().Obj(), "run-pod"), nil, start.Add(time.Minute), cancelledRun},
		"deleted at the timeout":                {withPodName(run().Obj(), "run-pod"), nil, start.Add(time.Hour), timedOutRun},
		"deleted before the timeout":            {withPodName(run().Obj(), "run-pod"), nil, start.Add(time.Hour - 2*time.Second), podGone},
		"being deleted for a cancel":            {run().Cancelled().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj())), start.Add(time.Minute), cancelledRun},
		"being deleted, not stopped by the run": {run().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj())), start.Add(time.Minute), podGone},
		"succeeded before a cancel, deleted since": {run().Cancelled().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).At(start).Succeeded().Obj())), start.Add(time.Minute),
			&outcome{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"}},
		"deadline on a run without timeout": {wrappers.TaskRun("ns", "run", "t").Timeout(0).Obj(), stoppedAtDeadline, start.Add(2 * time.Hour),
			&outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Status.StartTime = &metav1.Time{Time: start}
			r := &TaskRunReconciler{DefaultTimeout: time.Hour, now: func() time.Time { return tc.now }}
			s := r.newRunScope(tc.run)
			s.podName, s.claimed = currentPodName(tc.run)
			s.pod = tc.pod
			if err := finishIfPodEnded(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, s.outcome, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunScopeClock(t *testing.T) {
	now := testTime.Add(1500 * time.Millisecond)
	podCreated := testTime.Add(-time.Minute)
	tests := map[string]struct {
		run           *v1.TaskRun
		pod           *corev1.Pod
		defaultTO     time.Duration
		wantStart     time.Time
		wantTimedOut  bool
		wantRequeueIn time.Duration
	}{
		"new run: starts now, in whole seconds": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), defaultTO: time.Hour,
			wantStart: testTime.Add(time.Second), wantRequeueIn: time.Hour - 500*time.Millisecond,
		},
		"recorded start kept": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Minute).Obj(), testTime.Add(-30*time.Second)), defaultTO: time.Hour,
			wantStart: testTime.Add(-30 * time.Second), wantRequeueIn: 28500 * time.Millisecond,
		},
		"crash after creating the Pod: start recovered from it": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: podCreated}}},
			defaultTO: time.Hour, wantStart: podCreated, wantRequeueIn: time.Hour - 61500*time.Millisecond,
		},
		"deadline passed": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Second).Obj(), testTime), defaultTO: time.Hour,
			wantStart: testTime, wantTimedOut: true,
		},
		"no timeout": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(0).Obj(), testTime.Add(-24*time.Hour)), defaultTO: time.Hour,
			wantStart: testTime.Add(-24 * time.Hour),
		},
		"no default timeout": {
			run:       withStart(wrappers.TaskRun("ns", "run", "t").Obj(), testTime.Add(-24*time.Hour)),
			wantStart: testTime.Add(-24 * time.Hour),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &TaskRunReconciler{DefaultTimeout: tc.defaultTO, now: func() time.Time { return now }}
			s := r.newRunScope(tc.run)
			s.pod = tc.pod
			s.outcome = &outcome{status: metav1.ConditionUnknown}
			if got := s.startTime(); !got.Equal(tc.wantStart) {
				t.Errorf("startTime() = %s, want %s", got, tc.wantStart)
			}
			if got := s.timedOut(); got != tc.wantTimedOut {
				t.Errorf("timedOut() = %t, want %t", got, tc.wantTimedOut)
			}
			if !tc.wantTimedOut {
				if got := s.untilDeadline(); got != tc.wantRequeueIn {
					t.Errorf("untilDeadline() = %s, want %s", got, tc.wantRequeueIn)
				}
			}
		})
	}
}

// TestPodInTheWay checks the outcome of a run whose Pod name is taken, and
// that a run waiting for an earlier run's Pod looks again, sooner when it has
// just been created, no more than earlierPodRecheckMax apart later: no event
// tells it that an ended Pod has gone.
func TestPodInTheWay(t *testing.T) {
	created := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	run := wrappers.TaskRun("ns", "run", "t").UID("new").Obj()
	run.CreationTimestamp = metav1.NewTime(created)
	earlier := wrappers.TaskRun("ns", "run", "t").UID("old").Obj()
	earlier.APIVersion, earlier.Kind = v1.GroupVersion.String(), "TaskRun"
	other := wrappers.TaskRun("ns", "another", "t").UID("other").Obj()
	other.APIVersion, other.Kind = v1.GroupVersion.String(), "TaskRun"
	podOf := func(owner *v1.TaskRun) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-pod"}}
		if owner != nil {
			pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1.GroupVersion.WithKind("TaskRun"))}
		}
		return pod
	}
	waiting := &outcome{metav1.ConditionUnknown, v1.ReasonPending, `waiting for Pod "run-pod" of an earlier TaskRun named "run" to be deleted`}
	notOurs := &outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" already exists and is not controlled by this TaskRun`}
	tests := map[string]struct {
		pod    *corev1.Pod
		waited time.Duration
		want   *outcome
		// wantRecheck is how soon the run looks again; 0 for not sooner
		// than its deadline.
		wantRecheck time.Duration
	}{
		"earlier run's, just created":  {podOf(earlier), 0, waiting, time.Second},
		"earlier run's, after 10s":     {podOf(earlier), 10 * time.Second, waiting, 5 * time.Second},
		"earlier run's, after an hour": {podOf(earlier), time.Hour, waiting, 30 * time.Second},
		"earlier run's, clock behind":  {podOf(earlier), -time.Minute, waiting, time.Second},
		"another run's":                {podOf(other), time.Minute, notOurs, 0},
		"nobody's":                     {podOf(nil), time.Minute, notOurs, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &TaskRunReconciler{now: func() time.Time { return created.Add(tc.waited) }}
			s := r.newRunScope(run)
			s.podInTheWay(tc.pod)
			if diff := cmp.Diff(tc.want, s.outcome, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("podInTheWay() outcome mismatch (-want +got):\n%s", diff)
			}
			if s.recheckIn != tc.wantRecheck {
				t.Errorf("podInTheWay() rechecks in %s, want %s", s.recheckIn, tc.wantRecheck)
			}
		})
	}
}

func withPodName(run *v1.TaskRun, name string) *v1.TaskRun {
	run.Status.PodName = name
	return run
}

func withStart(run *v1.TaskRun, start time.Time) *v1.TaskRun {
	run.Status.StartTime = &metav1.Time{Time: start}
	return run
}

func withAttempts(run *v1.TaskRun, pods ...string) *v1.TaskRun {
	for _, pod := range pods {
		run.Status.Attempts = append(run.Status.Attempts, v1.Attempt{PodName: pod, Reason: string(v1.ReasonPodFailed)})
	}
	return run
}

func TestCurrentPodName(t *testing.T) {
	run := func() *v1.TaskRun { return wrappers.TaskRun("ns", "run", "t").Obj() }
	type want struct {
		Name    string
		Claimed bool
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		want want
	}{
		"new run":                                 {run(), want{"run-pod", false}},
		"first attempt recorded":                  {withPodName(run(), "run-pod"), want{"run-pod", true}},
		"a Pod an earlier release named":          {withPodName(run(), "legacy"), want{"legacy", true}},
		"retry not recorded yet":                  {withAttempts(withPodName(run(), "run-pod"), "run-pod"), want{"run-pod-retry1", false}},
		"retry recorded":                          {withAttempts(withPodName(run(), "run-pod-retry1"), "run-pod"), want{"run-pod-retry1", true}},
		"third attempt, second's Pod still named": {withAttempts(withPodName(run(), "run-pod-retry1"), "run-pod", "run-pod-retry1"), want{"run-pod-retry2", false}},
		"retry of a Pod an earlier release named": {withAttempts(withPodName(run(), "legacy"), "legacy"), want{"run-pod-retry1", false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, claimed := currentPodName(tc.run)
			if diff := cmp.Diff(tc.want, want{got, claimed}); diff != "" {
				t.Errorf("currentPodName() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
