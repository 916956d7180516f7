package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

const (
	pullFailed    = `Back-off pulling image "alpine"`
	secretMissing = `secret "git" not found`
	mountFailed   = `MountVolume.SetUp failed for volume "ws-settings" : configmap "settings" not found`
)

// pullingPod is the Pod of run "run" whose first step's image the kubelet
// has failed to pull since it took the Pod up, at since.
func pullingPod(since time.Time) *corev1.Pod {
	pod := threeStepPod()
	return withStatus(pod, wrappers.PodStatus(pod).At(since).CannotPull(0, "ImagePullBackOff", pullFailed, time.Time{}).Obj())
}

// configPod is the Pod of run "run" whose first step's container the kubelet
// cannot make, for a Secret it lacks.
func configPod() *corev1.Pod {
	pod := threeStepPod()
	return withStatus(pod, wrappers.PodStatus(pod).At(testTime).Waiting(0, "CreateContainerConfigError", secretMissing).Obj())
}

// mountHold is what the kubelet's FailedMount Event says of volume ws-settings.
func mountHold() *runpod.Hold {
	return runpod.FailedMount([]corev1.Event{{Reason: runpod.ReasonFailedMount, Message: mountFailed, LastTimestamp: metav1.NewTime(testTime)}})
}

func TestHeldTimeoutsFor(t *testing.T) {
	timeouts := HeldTimeouts{ImagePull: 5 * time.Minute, PodConfig: 2 * time.Minute}
	tests := map[string]struct {
		reason v1.TaskRunReason
		want   time.Duration
	}{
		"an image pull":   {v1.ReasonImagePullFailed, 5 * time.Minute},
		"a configuration": {v1.ReasonPodConfigFailed, 2 * time.Minute},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, timeouts.For(tc.reason)); diff != "" {
				t.Errorf("For(%s) mismatch (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestHeld checks that a hold that lasts longer than its timeout ends the
// run, naming what held it, and that before then the run is looked at again
// when it will have.
func TestHeld(t *testing.T) {
	type want struct {
		Outcome   *Outcome
		RecheckIn time.Duration
	}
	tests := map[string]struct {
		hold    *runpod.Hold
		since   time.Time
		timeout time.Duration
		want    want
	}{
		"an image pull, within its timeout": {
			hold: runpod.FindHeldStep(pullingPod(testTime.Add(-time.Minute))), since: testTime.Add(-time.Minute), timeout: 5 * time.Minute,
			want: want{RecheckIn: 4 * time.Minute},
		},
		"an image pull, past it": {
			hold: runpod.FindHeldStep(pullingPod(testTime.Add(-5 * time.Minute))), since: testTime.Add(-5 * time.Minute), timeout: 5 * time.Minute,
			want: want{Outcome: Failed(v1.ReasonImagePullFailed, `step "a" could not pull image "alpine" for 5m0s: ImagePullBackOff: %s`, pullFailed)},
		},
		"a Secret missing, within its timeout": {
			hold: runpod.FindHeldStep(configPod()), since: testTime.Add(-90 * time.Second), timeout: 2 * time.Minute,
			want: want{RecheckIn: 30 * time.Second},
		},
		"a Secret missing, past it": {
			hold: runpod.FindHeldStep(configPod()), since: testTime.Add(-3 * time.Minute), timeout: 2 * time.Minute,
			want: want{Outcome: Failed(v1.ReasonPodConfigFailed, `step "a" could not start for 2m0s: CreateContainerConfigError: %s`, secretMissing)},
		},
		"a volume that cannot mount, past its timeout": {
			hold: mountHold(), since: testTime.Add(-2 * time.Minute), timeout: 2 * time.Minute,
			want: want{Outcome: Failed(v1.ReasonPodConfigFailed, `volume "ws-settings" could not be mounted for 2m0s: FailedMount: %s`, mountFailed)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), nil, testTime)
			got := want{a.Held(tc.hold, tc.since, tc.timeout), a.RecheckIn}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Held() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHeldSince checks since when a hold counts: a pull's from the Pod's
// status, a configuration's from what the Pod records for the same container
// or volume, else from now, which is then to be recorded.
func TestHeldSince(t *testing.T) {
	now := testTime.Add(1500 * time.Millisecond)
	recorded := testTime.Add(-time.Minute)
	const (
		recordedForA      = `{"container":"step-a","since":"2026-01-01T11:59:00Z"}`
		recordedForVolume = `{"volume":"ws-settings","since":"2026-01-01T11:59:00Z"}`
		nowForA           = `{"container":"step-a","since":"2026-01-01T12:00:01Z"}`
		nowForVolume      = `{"volume":"ws-settings","since":"2026-01-01T12:00:01Z"}`
	)
	annotated := func(pod *corev1.Pod, value string) *corev1.Pod {
		pod = pod.DeepCopy()
		pod.Annotations[AnnotationHeldSince] = value
		return pod
	}
	type want struct {
		Since  time.Time
		Record string
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		hold func(pod *corev1.Pod) *runpod.Hold
		want want
	}{
		"an image pull: since the step could start, as the Pod says": {
			pod: pullingPod(recorded), hold: runpod.FindHeldStep,
			want: want{Since: recorded},
		},
		"an image pull, a record of a configuration besides: the Pod's status": {
			pod: annotated(pullingPod(testTime.Add(-time.Hour)), recordedForA), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(-time.Hour)},
		},
		"a configuration first seen: now, in whole seconds, to record": {
			pod: configPod(), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(time.Second), Record: nowForA},
		},
		"a configuration recorded for the same container": {
			pod: annotated(configPod(), recordedForA), hold: runpod.FindHeldStep,
			want: want{Since: recorded},
		},
		"a configuration recorded for another container: waits anew": {
			pod: annotated(configPod(), `{"container":"step-b","since":"2026-01-01T11:59:00Z"}`), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(time.Second), Record: nowForA},
		},
		"a record for a volume, the container held now: waits anew": {
			pod: annotated(configPod(), recordedForVolume), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(time.Second), Record: nowForA},
		},
		"a volume recorded for the same volume": {
			pod: annotated(configPod(), recordedForVolume), hold: func(*corev1.Pod) *runpod.Hold { return mountHold() },
			want: want{Since: recorded},
		},
		"a volume first seen": {
			pod: configPod(), hold: func(*corev1.Pod) *runpod.Hold { return mountHold() },
			want: want{Since: testTime.Add(time.Second), Record: nowForVolume},
		},
		"a malformed record: waits anew": {
			pod: annotated(configPod(), `{"container":"step-a","since":`), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(time.Second), Record: nowForA},
		},
		"a record without a time: waits anew": {
			pod: annotated(configPod(), `{"container":"step-a"}`), hold: runpod.FindHeldStep,
			want: want{Since: testTime.Add(time.Second), Record: nowForA},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), tc.pod, now)
			var got want
			got.Since, got.Record = a.HeldSince(tc.hold(tc.pod))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HeldSince() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMayBeHeldByMount: only a Pod that the kubelet has taken up and not made
// a sandbox for, whose steps all wait to be made, may be held by a mount.
func TestMayBeHeldByMount(t *testing.T) {
	pod := onNode(threeStepPod())
	sandboxNotReady := func(pod *corev1.Pod) *corev1.Pod {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}}
		return pod
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"no sandbox yet":      {sandboxNotReady(takenUp(pod, testTime)), true},
		"a sandbox":           {takenUp(pod, testTime), false},
		"a step running":      {sandboxNotReady(withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(0).Obj())), false},
		"not taken up":        {sandboxNotReady(&corev1.Pod{Spec: pod.Spec, Status: corev1.PodStatus{Phase: corev1.PodPending}}), false},
		"a step cannot start": {sandboxNotReady(configPod()), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), tc.pod, testTime)
			if diff := cmp.Diff(tc.want, a.MayBeHeldByMount()); diff != "" {
				t.Errorf("MayBeHeldByMount() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMountNotHeldYet checks the recheck of a run whose Pod may yet be held
// by a mount: a second after the kubelet took the Pod up, then half its wait
// so far, at most 30s apart; a sooner recheck stands.
func TestMountNotHeldYet(t *testing.T) {
	tests := map[string]struct {
		waited    time.Duration
		recheckIn time.Duration
		want      time.Duration
	}{
		"just taken up":         {waited: 0, want: time.Second},
		"taken up 1s ago":       {waited: time.Second, want: time.Second},
		"taken up 10s ago":      {waited: 10 * time.Second, want: 5 * time.Second},
		"taken up a minute ago": {waited: time.Minute, want: 30 * time.Second},
		"taken up an hour ago":  {waited: time.Hour, want: 30 * time.Second},
		"clock behind":          {waited: -time.Minute, want: time.Second},
		"a sooner recheck":      {waited: time.Hour, recheckIn: 3 * time.Second, want: 3 * time.Second},
		"a later recheck":       {waited: 10 * time.Second, recheckIn: time.Minute, want: 5 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := onNode(threeStepPod())
			pod = takenUp(pod, testTime)
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), pod, testTime.Add(tc.waited))
			a.RecheckIn = tc.recheckIn
			a.MountNotHeldYet()
			if diff := cmp.Diff(tc.want, a.RecheckIn); diff != "" {
				t.Errorf("RecheckIn after MountNotHeldYet() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
