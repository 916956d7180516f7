package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

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
			got, claimed := CurrentPodName(tc.run)
			if diff := cmp.Diff(tc.want, want{got, claimed}); diff != "" {
				t.Errorf("CurrentPodName() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttemptClock checks the run's start, whether it timed out, and when it
// is looked at again: at its deadline, or sooner at a recheck a decision
// asked for, never for a run that has ended.
func TestAttemptClock(t *testing.T) {
	now := testTime.Add(1500 * time.Millisecond)
	podCreated := testTime.Add(-time.Minute)
	createdPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: podCreated}}}
	type want struct {
		Start         time.Time
		TimedOut      bool
		UntilDeadline time.Duration
		RequeueAfter  time.Duration
	}
	tests := map[string]struct {
		run        *v1.TaskRun
		pod        *corev1.Pod
		createdPod bool
		defaultTO  time.Duration
		// recheckIn is what the decisions asked for, besides the deadline.
		recheckIn time.Duration
		// outcome is the run's; Unknown if nil.
		outcome *Outcome
		want    want
	}{
		"new run: starts now, in whole seconds": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), defaultTO: time.Hour,
			want: want{Start: testTime.Add(time.Second), UntilDeadline: time.Hour - 500*time.Millisecond, RequeueAfter: time.Hour - 500*time.Millisecond},
		},
		"recorded start kept": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Minute).Obj(), testTime.Add(-30*time.Second)), defaultTO: time.Hour,
			want: want{Start: testTime.Add(-30 * time.Second), UntilDeadline: 28500 * time.Millisecond, RequeueAfter: 28500 * time.Millisecond},
		},
		"crash after creating the Pod: start recovered from it": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), pod: createdPod, defaultTO: time.Hour,
			want: want{Start: podCreated, UntilDeadline: time.Hour - 61500*time.Millisecond, RequeueAfter: time.Hour - 61500*time.Millisecond},
		},
		"Pod created by this reconcile: starts now": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), pod: createdPod, createdPod: true, defaultTO: time.Hour,
			want: want{Start: testTime.Add(time.Second), UntilDeadline: time.Hour - 500*time.Millisecond, RequeueAfter: time.Hour - 500*time.Millisecond},
		},
		"Pod created after now (the API server's clock ahead): starts now": {
			run: wrappers.TaskRun("ns", "run", "t").Obj(), defaultTO: time.Hour,
			pod:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: now.Add(time.Minute)}}},
			want: want{Start: testTime.Add(time.Second), UntilDeadline: time.Hour - 500*time.Millisecond, RequeueAfter: time.Hour - 500*time.Millisecond},
		},
		"deadline passed": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Second).Obj(), testTime), defaultTO: time.Hour,
			want: want{Start: testTime, TimedOut: true, UntilDeadline: time.Second, RequeueAfter: time.Second},
		},
		"no timeout": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(0).Obj(), testTime.Add(-24*time.Hour)), defaultTO: time.Hour,
			want: want{Start: testTime.Add(-24 * time.Hour)},
		},
		"no default timeout": {
			run:  withStart(wrappers.TaskRun("ns", "run", "t").Obj(), testTime.Add(-24*time.Hour)),
			want: want{Start: testTime.Add(-24 * time.Hour)},
		},
		"a recheck sooner than the deadline": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Minute).Obj(), testTime), recheckIn: 5 * time.Second,
			want: want{Start: testTime, UntilDeadline: 58500 * time.Millisecond, RequeueAfter: 5 * time.Second},
		},
		"a recheck later than the deadline": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Minute).Obj(), testTime), recheckIn: 5 * time.Minute,
			want: want{Start: testTime, UntilDeadline: 58500 * time.Millisecond, RequeueAfter: 58500 * time.Millisecond},
		},
		"a recheck, no timeout": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(0).Obj(), testTime), recheckIn: 5 * time.Second,
			want: want{Start: testTime, RequeueAfter: 5 * time.Second},
		},
		"ended: neither deadline nor recheck": {
			run: withStart(wrappers.TaskRun("ns", "run", "t").Timeout(time.Minute).Obj(), testTime), recheckIn: 5 * time.Second,
			outcome: Failed(v1.ReasonStepFailed, "x"),
			want:    want{Start: testTime},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := NewAttempt(tc.run, now, tc.defaultTO)
			a.Pod, a.CreatedPod, a.RecheckIn = tc.pod, tc.createdPod, tc.recheckIn
			a.Outcome = tc.outcome
			if a.Outcome == nil {
				a.Outcome = &Outcome{Status: metav1.ConditionUnknown}
			}
			got := want{Start: a.StartTime(), TimedOut: a.TimedOut(), UntilDeadline: a.UntilDeadline(), RequeueAfter: a.RequeueAfter()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clock mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecheckWithin: the soonest recheck asked for wins.
func TestRecheckWithin(t *testing.T) {
	tests := map[string]struct {
		asked []time.Duration
		want  time.Duration
	}{
		"none":           {nil, 0},
		"one":            {[]time.Duration{time.Minute}, time.Minute},
		"sooner wins":    {[]time.Duration{time.Minute, time.Second}, time.Second},
		"later is moot":  {[]time.Duration{time.Second, time.Minute}, time.Second},
		"after a none":   {[]time.Duration{0, time.Minute}, time.Minute},
		"a none is moot": {[]time.Duration{time.Minute, 0}, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), nil, testTime)
			for _, d := range tc.asked {
				a.RecheckWithin(d)
			}
			if diff := cmp.Diff(tc.want, a.RecheckIn); diff != "" {
				t.Errorf("RecheckIn mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartedFirstPod: a reconcile that created a run's first Pod, and
// changed nothing else, may leave the start to the Pod's own reconcile.
func TestStartedFirstPod(t *testing.T) {
	run := func() *v1.TaskRun { return wrappers.TaskRun("ns", "run", "t").Obj() }
	spec := wrappers.Task("ns", "t").Step("a", "alpine", "true").Obj().Spec
	inline := func() *v1.TaskRun { return wrappers.TaskRun("ns", "run", "").Inline(spec).Obj() }
	pinned := func() *v1.TaskRun { return wrappers.TaskRun("ns", "run", "t").Pinned(spec).Obj() }
	tests := map[string]struct {
		original *v1.TaskRun
		created  bool
		// taskVersion is the Pod's runstate.AnnotationTaskVersion.
		taskVersion string
		outcome     *Outcome
		want        bool
	}{
		"first Pod created":                  {original: inline(), created: true, outcome: Unknown(v1.ReasonPending, "p"), want: true},
		"first Pod created, nothing decided": {original: inline(), created: true, want: true},
		"first Pod of a pinned run":          {original: pinned(), created: true, outcome: Unknown(v1.ReasonPending, "p"), want: true},
		"first Pod of its Task, named on it": {original: run(), created: true, taskVersion: "u/1/7", outcome: Unknown(v1.ReasonPending, "p"), want: true},
		"first Pod of its Task, pinned now":  {original: run(), created: true, outcome: Unknown(v1.ReasonPending, "p")},
		"no Pod created":                     {original: run(), taskVersion: "u/1/7", outcome: Unknown(v1.ReasonPending, "p")},
		"start already recorded":             {original: withStart(run(), testTime), created: true, taskVersion: "u/1/7", outcome: Unknown(v1.ReasonPending, "p")},
		"a retry's Pod":                      {original: withAttempts(run(), "run-pod"), created: true, taskVersion: "u/1/7", outcome: Unknown(v1.ReasonPending, "p")},
		"created, and the run ended":         {original: run(), created: true, taskVersion: "u/1/7", outcome: Failed(v1.ReasonCancelled, "c")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := threeStepPod()
			if tc.taskVersion != "" {
				pod.Annotations = map[string]string{runstate.AnnotationTaskVersion: tc.taskVersion}
			}
			a := attemptOf(tc.original.DeepCopy(), pod, testTime)
			a.CreatedPod, a.Outcome = tc.created, tc.outcome
			if diff := cmp.Diff(tc.want, a.StartedFirstPod(tc.original)); diff != "" {
				t.Errorf("StartedFirstPod() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSteps: the steps are read once for each version of the Pod.
func TestSteps(t *testing.T) {
	pod := withStatus(threeStepPod(), wrappers.PodStatus(threeStepPod()).At(testTime).Running(0).Obj())
	pod.ResourceVersion = "1"
	a := attemptOf(wrappers.TaskRun("ns", "run", "t").Obj(), pod, testTime)
	if a.Steps()[0].State != v1.StepRunning {
		t.Fatalf("Steps() = %+v, want step a running", a.Steps())
	}
	moved := withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(1).Obj())
	moved.ResourceVersion = "2"
	a.Pod = moved
	got := []v1.StepContainerState{}
	for _, s := range a.Steps() {
		got = append(got, s.State)
	}
	if diff := cmp.Diff([]v1.StepContainerState{v1.StepTerminated, v1.StepRunning, v1.StepWaiting}, got); diff != "" {
		t.Errorf("Steps() of the Pod's next version (-want +got):\n%s", diff)
	}
	a.Pod = nil
	if steps := a.Steps(); steps != nil {
		t.Errorf("Steps() without a Pod = %+v, want none", steps)
	}
}
