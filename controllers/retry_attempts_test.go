package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestRetryDecision(t *testing.T) {
	podFailed := failed(v1.ReasonPodFailed, "evicted")
	stepFailed := failed(v1.ReasonStepFailed, "step exited 1")
	run := func(retries *int32, on ...v1.RetryReason) *v1.TaskRun {
		r := wrappers.TaskRun("ns", "run", "t").Obj()
		r.Spec.Retries, r.Spec.RetryOn = retries, on
		return r
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		o    *outcome
		want bool
	}{
		"no retries":                        {run(nil), podFailed, false},
		"retries 0":                         {run(ptr.To[int32](0)), podFailed, false},
		"PodFailed by default":              {run(ptr.To[int32](1)), podFailed, true},
		"StepFailed not by default":         {run(ptr.To[int32](1)), stepFailed, false},
		"StepFailed when asked":             {run(ptr.To[int32](1), v1.RetryOnStepFailed), stepFailed, true},
		"then PodFailed no longer":          {run(ptr.To[int32](1), v1.RetryOnStepFailed), podFailed, false},
		"both":                              {run(ptr.To[int32](1), v1.RetryOnStepFailed, v1.RetryOnPodFailed), podFailed, true},
		"timeout never":                     {run(ptr.To[int32](1)), failed(v1.ReasonTimeout, "late"), false},
		"cancel never":                      {run(ptr.To[int32](1)), failed(v1.ReasonCancelled, "stop"), false},
		"image pull never":                  {run(ptr.To[int32](1)), failed(v1.ReasonImagePullFailed, "nope"), false},
		"success never":                     {run(ptr.To[int32](1)), succeeded(), false},
		"going on":                          {run(ptr.To[int32](1)), unknown(v1.ReasonRunning, ""), false},
		"no outcome":                        {run(ptr.To[int32](1)), nil, false},
		"last retry used":                   {withAttempts(run(ptr.To[int32](1)), "run-pod"), podFailed, false},
		"one of two retries used":           {withAttempts(run(ptr.To[int32](2)), "run-pod"), podFailed, true},
		"ten retries, the tenth still left": {withAttempts(run(ptr.To[int32](10)), "0", "1", "2", "3", "4", "5", "6", "7", "8"), podFailed, true},
		"ten retries used":                  {withAttempts(run(ptr.To[int32](10)), "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"), podFailed, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := retries(tc.run, tc.o); got != tc.want {
				t.Errorf("retries() = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestRecordAttempt(t *testing.T) {
	start := metav1.NewTime(testTime)
	firstFailed := metav1.NewTime(testTime.Add(time.Minute))
	now := testTime.Add(2*time.Minute + 300*time.Millisecond)
	tests := map[string]struct {
		status  v1.TaskRunStatus
		podName string
		want    v1.Attempt
	}{
		"first attempt starts with the run": {
			status: v1.TaskRunStatus{StartTime: &start, PodName: "run-pod", Steps: []v1.StepState{{Name: "a"}},
				Results: []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:0")}}},
			podName: "run-pod",
			want: v1.Attempt{PodName: "run-pod", StartTime: &start, CompletionTime: &metav1.Time{Time: testTime.Add(2 * time.Minute)},
				Reason: "PodFailed", Message: `Pod "run-pod" was evicted: low on memory`},
		},
		"a retry starts when the attempt before failed": {
			status: v1.TaskRunStatus{StartTime: &start, PodName: "run-pod-retry1",
				Attempts: []v1.Attempt{{PodName: "run-pod", StartTime: &start, CompletionTime: &firstFailed, Reason: "PodFailed"}}},
			podName: "run-pod-retry1",
			want: v1.Attempt{PodName: "run-pod-retry1", StartTime: &firstFailed, CompletionTime: &metav1.Time{Time: testTime.Add(2 * time.Minute)},
				Reason: "PodFailed", Message: `Pod "run-pod" was evicted: low on memory`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			run.Status = tc.status
			r := &TaskRunReconciler{now: func() time.Time { return now }}
			s := r.newRunScope(run)
			s.podName, s.outcome = tc.podName, failed(v1.ReasonPodFailed, `Pod "run-pod" was evicted: low on memory`)
			s.recordAttempt()
			got := run.Status.Attempts[len(run.Status.Attempts)-1]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("recorded attempt mismatch (-want +got):\n%s", diff)
			}
			if run.Status.PodName != "" || run.Status.Steps != nil || run.Status.Results != nil || s.outcome != nil || s.pod != nil {
				t.Errorf("after recordAttempt: podName %q, steps %v, results %v, outcome %v, pod %v; want none: they were the failed attempt's",
					run.Status.PodName, run.Status.Steps, run.Status.Results, s.outcome, s.pod)
			}
		})
	}
}

func TestRetryingWhilePending(t *testing.T) {
	retried := wrappers.TaskRun("ns", "run", "t").Obj()
	retried.Spec.Retries = ptr.To[int32](2)
	retried.Status.Attempts = []v1.Attempt{{PodName: "run-pod", Reason: "PodFailed", Message: `Pod "run-pod" was evicted: low on memory`}}
	pending := unknown(v1.ReasonPending, `Pod "run-pod-retry1" has not started a step yet`)
	tests := map[string]struct {
		run  *v1.TaskRun
		o    *outcome
		want *outcome
	}{
		"first attempt pending": {wrappers.TaskRun("ns", "run", "t").Obj(), pending, pending},
		"retry pending": {retried, pending, unknown(v1.ReasonRetrying,
			`attempt 1 of 3 failed (PodFailed): Pod "run-pod" was evicted: low on memory; attempt 2: Pod "run-pod-retry1" has not started a step yet`)},
		"retry running":              {retried, unknown(v1.ReasonRunning, "running"), unknown(v1.ReasonRunning, "running")},
		"retry failed":               {retried, failed(v1.ReasonStepFailed, "x"), failed(v1.ReasonStepFailed, "x")},
		"retry waiting for its Task": {retried, unknown(v1.ReasonWaitingForTask, "w"), unknown(v1.ReasonWaitingForTask, "w")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, retryingWhilePending(tc.run, tc.o), cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("retryingWhilePending() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
