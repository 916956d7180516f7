package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodEnded checks the outcome of an attempt whose Pod has ended or is
// gone, from the run, its Pod and the clock alone; a Pod the run stopped
// itself ends it as the run's cancel or timeout, not as a Pod failure.
func TestPodEnded(t *testing.T) {
	start := testTime
	pod := threeStepPod()
	stoppedAtDeadline := withStatus(pod, wrappers.PodStatus(pod).At(start).DeadlineExceeded(1).Obj())
	deleting := func(p *corev1.Pod) *corev1.Pod { return deletedAt(p, start.Add(time.Minute)) }
	cancelledRun := &Outcome{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "run" was cancelled`}
	timedOutRun := &Outcome{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "run" did not finish within 1h0m0s`}
	podGone := &Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour) }
	tests := map[string]struct {
		run  *v1.TaskRun
		pod  *corev1.Pod
		now  time.Time
		want *Outcome
	}{
		"no Pod yet": {run().Obj(), nil, start, nil},
		"Pod gone": {withPodName(run().Obj(), "run-pod"), nil, start,
			&Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}},
		"retry's Pod not created yet": {withAttempts(withPodName(run().Obj(), "run-pod"), "run-pod"), nil, start, nil},
		"retry's Pod gone": {withAttempts(withPodName(run().Obj(), "run-pod-retry1"), "run-pod"), nil, start,
			&Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod-retry1" was deleted before the run finished`}},
		"Pod running": {run().Obj(), withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj()), start, nil},
		"run's own deadline": {run().Obj(), stoppedAtDeadline, start.Add(time.Hour - 2*time.Second),
			&Outcome{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "run" did not finish within 1h0m0s`}},
		"deadline lowered for a cancel": {run().Cancelled().Obj(), stoppedAtDeadline, start.Add(time.Minute),
			&Outcome{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "run" was cancelled`}},
		"deadline someone else set": {run().Obj(), stoppedAtDeadline, start.Add(time.Minute),
			&Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
		// A reconcile that stopped the Pod and could not write why: the next
		// one must not call the stop a Pod failure.
		"deleted for a cancel":                  {withPodName(run().Cancelled().Obj(), "run-pod"), nil, start.Add(time.Minute), cancelledRun},
		"deleted at the timeout":                {withPodName(run().Obj(), "run-pod"), nil, start.Add(time.Hour), timedOutRun},
		"deleted before the timeout":            {withPodName(run().Obj(), "run-pod"), nil, start.Add(time.Hour - 2*time.Second), podGone},
		"being deleted for a cancel":            {run().Cancelled().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj())), start.Add(time.Minute), cancelledRun},
		"being deleted, not stopped by the run": {run().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).Running(0).Obj())), start.Add(time.Minute), podGone},
		"succeeded before a cancel, deleted since": {run().Cancelled().Obj(), deleting(withStatus(pod, wrappers.PodStatus(pod).At(start).Succeeded().Obj())), start.Add(time.Minute),
			&Outcome{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"}},
		"deadline on a run without timeout": {wrappers.TaskRun("ns", "run", "t").Timeout(0).Obj(), stoppedAtDeadline, start.Add(2 * time.Hour),
			&Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
		"a step failed": {run().Obj(), withStatus(pod, wrappers.PodStatus(pod).At(start).StepFailed(1, 3).Obj()), start.Add(time.Minute),
			&Outcome{metav1.ConditionFalse, v1.ReasonStepFailed, `step "b" exited with code 3`}},
		"a step failed, then the run was cancelled": {run().Cancelled().Obj(), withStatus(pod, wrappers.PodStatus(pod).At(start).StepFailed(1, 3).Obj()), start.Add(time.Minute),
			&Outcome{metav1.ConditionFalse, v1.ReasonStepFailed, `step "b" exited with code 3`}},
		"evicted": {run().Obj(), withStatus(pod, wrappers.PodStatus(pod).At(start).Evicted(1, "low on memory").Obj()), start.Add(time.Minute),
			&Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was evicted: low on memory`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Status.StartTime = &metav1.Time{Time: start}
			a := attemptOf(tc.run, tc.pod, tc.now)
			if diff := cmp.Diff(tc.want, a.PodEnded()); diff != "" {
				t.Errorf("PodEnded() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	podFailed := Failed(v1.ReasonPodFailed, "evicted")
	stepFailed := Failed(v1.ReasonStepFailed, "step exited 1")
	run := func(retries *int32, on ...v1.RetryReason) *v1.TaskRun {
		r := wrappers.TaskRun("ns", "run", "t").Obj()
		r.Spec.Retries, r.Spec.RetryOn = retries, on
		return r
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		o    *Outcome
		want bool
	}{
		"no retries":                        {run(nil), podFailed, false},
		"retries 0":                         {run(ptr.To[int32](0)), podFailed, false},
		"PodFailed by default":              {run(ptr.To[int32](1)), podFailed, true},
		"StepFailed not by default":         {run(ptr.To[int32](1)), stepFailed, false},
		"StepFailed when asked":             {run(ptr.To[int32](1), v1.RetryOnStepFailed), stepFailed, true},
		"then PodFailed no longer":          {run(ptr.To[int32](1), v1.RetryOnStepFailed), podFailed, false},
		"both":                              {run(ptr.To[int32](1), v1.RetryOnStepFailed, v1.RetryOnPodFailed), podFailed, true},
		"timeout never":                     {run(ptr.To[int32](1)), Failed(v1.ReasonTimeout, "late"), false},
		"cancel never":                      {run(ptr.To[int32](1)), Failed(v1.ReasonCancelled, "stop"), false},
		"image pull never":                  {run(ptr.To[int32](1)), Failed(v1.ReasonImagePullFailed, "nope"), false},
		"success never":                     {run(ptr.To[int32](1)), succeeded(), false},
		"going on":                          {run(ptr.To[int32](1)), Unknown(v1.ReasonRunning, ""), false},
		"no outcome":                        {run(ptr.To[int32](1)), nil, false},
		"last retry used":                   {withAttempts(run(ptr.To[int32](1)), "run-pod"), podFailed, false},
		"one of two retries used":           {withAttempts(run(ptr.To[int32](2)), "run-pod"), podFailed, true},
		"ten retries, the tenth still left": {withAttempts(run(ptr.To[int32](10)), "0", "1", "2", "3", "4", "5", "6", "7", "8"), podFailed, true},
		"ten retries used":                  {withAttempts(run(ptr.To[int32](10)), "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"), podFailed, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Retries(tc.run, tc.o)); diff != "" {
				t.Errorf("Retries() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecordAttempt: the failed attempt is recorded, and what the status
// and the attempt said of its Pod is forgotten: the next attempt is current.
func TestRecordAttempt(t *testing.T) {
	start := metav1.NewTime(testTime)
	firstFailed := metav1.NewTime(testTime.Add(time.Minute))
	now := testTime.Add(2*time.Minute + 300*time.Millisecond)
	failedAt := &metav1.Time{Time: testTime.Add(2 * time.Minute)}
	const evicted = `Pod "run-pod" was evicted: low on memory`
	type want struct {
		Attempts []v1.Attempt
		// StartTime, PodName, Steps and Results are the status's.
		StartTime *metav1.Time
		PodName   string
		Steps     []v1.StepState
		Results   []v1.RunResult
		// Outcome, Pod and Next are the attempt's: Next the Pod it names.
		Outcome *Outcome
		Pod     *corev1.Pod
		Next    string
	}
	tests := map[string]struct {
		status v1.TaskRunStatus
		want   want
	}{
		"first attempt starts with the run": {
			status: v1.TaskRunStatus{StartTime: &start, PodName: "run-pod", Steps: []v1.StepState{{Name: "a"}},
				Results: []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:0")}}},
			want: want{
				Attempts:  []v1.Attempt{{PodName: "run-pod", StartTime: &start, CompletionTime: failedAt, Reason: "PodFailed", Message: evicted}},
				StartTime: &start, Next: "run-pod-retry1",
			},
		},
		"a retry starts when the attempt before failed": {
			status: v1.TaskRunStatus{StartTime: &start, PodName: "run-pod-retry1",
				Attempts: []v1.Attempt{{PodName: "run-pod", StartTime: &start, CompletionTime: &firstFailed, Reason: "PodFailed"}}},
			want: want{
				Attempts: []v1.Attempt{
					{PodName: "run-pod", StartTime: &start, CompletionTime: &firstFailed, Reason: "PodFailed"},
					{PodName: "run-pod-retry1", StartTime: &firstFailed, CompletionTime: failedAt, Reason: "PodFailed", Message: evicted},
				},
				StartTime: &start, Next: "run-pod-retry2",
			},
		},
		"start not recorded yet: recorded with the attempt": {
			status: v1.TaskRunStatus{PodName: "run-pod"},
			want: want{
				Attempts:  []v1.Attempt{{PodName: "run-pod", StartTime: failedAt, CompletionTime: failedAt, Reason: "PodFailed", Message: evicted}},
				StartTime: failedAt, Next: "run-pod-retry1",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			run.Status = tc.status
			a := attemptOf(run, nil, now)
			a.Outcome = Failed(v1.ReasonPodFailed, evicted)
			a.RecordAttempt()
			st := run.Status
			got := want{Attempts: st.Attempts, StartTime: st.StartTime, PodName: st.PodName, Steps: st.Steps, Results: st.Results,
				Outcome: a.Outcome, Pod: a.Pod, Next: a.PodName}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("after RecordAttempt() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndOrRetry checks what follows an attempt whose Pod ends, or is being
// deleted, on a node that has not failed (TestEndOrRetryOnANodeFault has
// those that have): the outcome stands, or the attempt is recorded and the
// next one goes on, once the old Pod no longer runs.
func TestEndOrRetry(t *testing.T) {
	start := testTime.Add(-10 * time.Minute)
	pod := threeStepPod()
	running := withStatus(pod, wrappers.PodStatus(pod).At(start).Running(1).Obj())
	stepFailed := withStatus(pod, wrappers.PodStatus(pod).At(start).StepFailed(1, 3).Obj())
	cannotStart := withStatus(pod, wrappers.PodStatus(pod).At(start).
		Waiting(1, "RunContainerError", `exec: "true": executable file not found in $PATH`).Obj())
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour) }
	const cannotStartMessage = `step "b" could not start: RunContainerError: exec: "true": executable file not found in $PATH`
	type want = endJudgement
	type attempt = recordedAttempt
	tests := map[string]struct {
		run  *v1.TaskRun
		pod  *corev1.Pod
		now  time.Time
		want want
	}{
		"Pod running: the attempt goes on": {
			run: withRetries(run().Obj(), 1), pod: running, now: testTime,
		},
		"a step failed, not retried: the failure stands": {
			run: run().Obj(), pod: stepFailed, now: testTime,
			want: want{Outcome: Failed(v1.ReasonStepFailed, `step "b" exited with code 3`)},
		},
		"a step failed, retried: recorded, the ended Pod left alone": {
			run: withRetries(run().Obj(), 1, v1.RetryOnStepFailed), pod: stepFailed, now: testTime,
			want: want{Next: Retry, Attempts: []attempt{{"run-pod", "StepFailed", `step "b" exited with code 3`}}},
		},
		"a step cannot start, retried: the Pod, still running, is stopped first": {
			run: withRetries(run().Obj(), 1, v1.RetryOnStepFailed), pod: cannotStart, now: testTime,
			want: want{Next: Retry, StopPod: true, Attempts: []attempt{{"run-pod", "StepFailed", cannotStartMessage}}},
		},
		"a step cannot start, not retried: the failure stands, the Pod stopped once the status says so": {
			run: run().Obj(), pod: cannotStart, now: testTime,
			want: want{Outcome: Failed(v1.ReasonStepFailed, cannotStartMessage)},
		},
		"being deleted, retried: the next attempt waits for it to be gone": {
			run: withRetries(run().Obj(), 2), pod: deletedAt(running, testTime.Add(-time.Second)), now: testTime,
			want: want{Next: WaitForTermination, Outcome: Unknown(v1.ReasonRetrying, `attempt 1 of 3 failed (PodFailed): `+
				`Pod "run-pod" was deleted before the run finished; attempt 1's Pod "run-pod" is being deleted and its steps may still run: `+
				"waiting for it to be gone before attempt 2")},
		},
		"being deleted, not retried": {
			run: run().Obj(), pod: deletedAt(running, testTime.Add(-time.Second)), now: testTime,
			want: want{Outcome: Failed(v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`)},
		},
		"gone, retried: recorded": {
			run: withRetries(withPodName(run().Obj(), "run-pod"), 1), now: testTime,
			want: want{Next: Retry, Attempts: []attempt{{"run-pod", "PodFailed", `Pod "run-pod" was deleted before the run finished`}}},
		},
		"gone for a cancel, retries left: the cancel stands": {
			run: withRetries(withPodName(run().Cancelled().Obj(), "run-pod"), 1), now: testTime,
			want: want{Outcome: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`)},
		},
		"a step failed, retried, but the run timed out: the failure stands": {
			run: withRetries(run().Timeout(5*time.Minute).Obj(), 1, v1.RetryOnStepFailed), pod: stepFailed, now: testTime,
			want: want{Outcome: Failed(v1.ReasonStepFailed, `step "b" exited with code 3`)},
		},
		"retries used: the failure stands": {
			run: withAttempts(withRetries(withPodName(run().Obj(), "run-pod-retry1"), 1), "run-pod"), now: testTime,
			want: want{Outcome: Failed(v1.ReasonPodFailed, `Pod "run-pod-retry1" was deleted before the run finished`),
				Attempts: []attempt{{"run-pod", "PodFailed", ""}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Status.StartTime = &metav1.Time{Time: start}
			a := attemptOf(tc.run, tc.pod, tc.now)
			if diff := cmp.Diff(tc.want, judgeEnd(a)); diff != "" {
				t.Errorf("EndOrRetry() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttemptFailed(t *testing.T) {
	run := withRetries(wrappers.TaskRun("ns", "run", "t").Obj(), 2)
	run.Status.Attempts = []v1.Attempt{
		{PodName: "run-pod", Reason: "PodFailed", Message: `Pod "run-pod" was evicted: low on memory`},
		{PodName: "run-pod-retry1", Reason: "StepFailed", Message: `step "a" exited with code 1`},
	}
	tests := map[string]struct {
		i    int
		want string
	}{
		"first":  {0, `attempt 1 of 3 failed (PodFailed): Pod "run-pod" was evicted: low on memory`},
		"second": {1, `attempt 2 of 3 failed (StepFailed): step "a" exited with code 1`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AttemptFailed(run, tc.i)); diff != "" {
				t.Errorf("AttemptFailed() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
