package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestProgress checks the outcome of a run whose Pod goes on, as its Pod
// says it.
func TestProgress(t *testing.T) {
	pod := threeStepPod()
	mount := &runpod.Hold{Reason: v1.ReasonPodConfigFailed, Volume: "ws-settings",
		Why: corev1.ContainerStateWaiting{Reason: runpod.ReasonFailedMount, Message: `configmap "settings" not found`}}
	tests := map[string]struct {
		pod   *corev1.Pod
		mount *runpod.Hold
		want  *Outcome
	}{
		"taken up, no step started": {
			pod:  takenUp(pod, testTime),
			want: Unknown(v1.ReasonPending, `Pod "run-pod" has not started a step yet`),
		},
		"a volume that cannot mount": {
			pod: takenUp(pod, testTime), mount: mount,
			want: Unknown(v1.ReasonPending, `volume "ws-settings": FailedMount: configmap "settings" not found`),
		},
		"a Secret missing": {
			pod:  withStatus(pod, wrappers.PodStatus(pod).At(testTime).Waiting(0, "CreateContainerConfigError", `secret "git" not found`).Obj()),
			want: Unknown(v1.ReasonPending, `step "a": CreateContainerConfigError: secret "git" not found`),
		},
		"second step running": {
			pod:  withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(1).Obj()),
			want: Unknown(v1.ReasonRunning, `running step "b" (2 of 3)`),
		},
		"second step's image not pulled": {
			pod:  withStatus(pod, wrappers.PodStatus(pod).At(testTime).CannotPull(1, "ErrImagePull", "not found", testTime).Obj()),
			want: Unknown(v1.ReasonRunning, `running step "b" (2 of 3): ErrImagePull: not found`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), tc.pod, testTime)
			a.MountHeld = tc.mount
			if diff := cmp.Diff(tc.want, a.Progress()); diff != "" {
				t.Errorf("Progress() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryingWhilePending(t *testing.T) {
	retried := wrappers.TaskRun("ns", "run", "t").Obj()
	retried.Spec.Retries = ptr.To[int32](2)
	retried.Status.Attempts = []v1.Attempt{{PodName: "run-pod", Reason: "PodFailed", Message: `Pod "run-pod" was evicted: low on memory`}}
	pending := Unknown(v1.ReasonPending, `Pod "run-pod-retry1" has not started a step yet`)
	tests := map[string]struct {
		run  *v1.TaskRun
		o    *Outcome
		want *Outcome
	}{
		"first attempt pending": {wrappers.TaskRun("ns", "run", "t").Obj(), pending, pending},
		"retry pending": {retried, pending, Unknown(v1.ReasonRetrying,
			`attempt 1 of 3 failed (PodFailed): Pod "run-pod" was evicted: low on memory; attempt 2: Pod "run-pod-retry1" has not started a step yet`)},
		"retry running":              {retried, Unknown(v1.ReasonRunning, "running"), Unknown(v1.ReasonRunning, "running")},
		"retry failed":               {retried, Failed(v1.ReasonStepFailed, "x"), Failed(v1.ReasonStepFailed, "x")},
		"retry waiting for its Task": {retried, Unknown(v1.ReasonWaitingForTask, "w"), Unknown(v1.ReasonWaitingForTask, "w")},
		"retry, nothing decided":     {retried, nil, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, retryingWhilePending(tc.run, tc.o)); diff != "" {
				t.Errorf("retryingWhilePending() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPendingTooLong checks, through Settle, spec.timeouts.pending: a first
// attempt that has not started a step within it ends PendingTimeout, saying
// what held it; before that, the run is looked at again when it passes.
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
	waiting := Unknown(v1.ReasonPending, `Pod "run-pod" is waiting to be scheduled`)
	noTask := Unknown(v1.ReasonWaitingForTask, `waiting for Task "t", which does not exist`)
	ended := `TaskRun "run" did not start its first step within 10m0s (spec.timeouts.pending): `
	type want struct {
		Outcome   *Outcome
		RecheckIn time.Duration
	}
	tests := map[string]struct {
		run   *v1.TaskRun
		o     *Outcome
		after time.Duration
		want  want
	}{
		"no bound":                 {run: run(0), o: waiting, after: time.Hour, want: want{Outcome: waiting}},
		"within the bound":         {run: run(pending), o: waiting, after: 4 * time.Minute, want: want{waiting, 6 * time.Minute}},
		"past it, Pending":         {run: run(pending), o: waiting, after: pending, want: want{Outcome: Failed(v1.ReasonPendingTimeout, "%s%s", ended, waiting.Message)}},
		"past it, no Task":         {run: run(pending), o: noTask, after: pending + time.Second, want: want{Outcome: Failed(v1.ReasonPendingTimeout, "%s%s", ended, noTask.Message)}},
		"a step runs":              {run: run(pending), o: Unknown(v1.ReasonRunning, `running step "a" (1 of 1)`), after: time.Hour, want: want{Outcome: Unknown(v1.ReasonRunning, `running step "a" (1 of 1)`)}},
		"ended otherwise":          {run: run(pending), o: Failed(v1.ReasonImagePullFailed, "no image"), after: time.Hour, want: want{Outcome: Failed(v1.ReasonImagePullFailed, "no image")}},
		"a retry waits: not bound": {run: run(pending, "run-pod"), o: Unknown(v1.ReasonRetrying, "attempt 2"), after: time.Hour, want: want{Outcome: Unknown(v1.ReasonRetrying, "attempt 2")}},
		"no outcome":               {run: run(pending), o: nil, after: time.Hour, want: want{}},
		"a retry pending past the bound: Retrying, not bound": {run: withRetries(run(pending, "run-pod"), 1), o: waiting, after: time.Hour,
			want: want{Outcome: Unknown(v1.ReasonRetrying, `attempt 1 of 2 failed (PodFailed): ; attempt 2: Pod "run-pod" is waiting to be scheduled`)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(tc.run, nil, testTime.Add(tc.after))
			a.Outcome = tc.o
			a.Settle()
			if diff := cmp.Diff(tc.want, want{a.Outcome, a.RecheckIn}); diff != "" {
				t.Errorf("after Settle() (-want +got):\n%s", diff)
			}
		})
	}
}
