package controllers_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// startControllerWith starts the controller as startController does (a
// default timeout of an hour), with configure setting the rest of the
// reconciler's flags, until the test ends.
func (h *harness) startControllerWith(t *testing.T, configure func(*controllers.TaskRunReconciler)) {
	t.Helper()
	h.startControllerOn(t, func(c client.Client) client.Client { return c }, configure)
}

// startControllerOn starts the controller as startControllerWith does, its
// client wrapped by wrap (under the counting of its writes).
func (h *harness) startControllerOn(t *testing.T, wrap func(client.Client) client.Client, configure func(*controllers.TaskRunReconciler)) (stop func()) {
	t.Helper()
	return h.StartManager(t, func(mgr ctrl.Manager) error {
		h.writes = &countingClient{Client: wrap(mgr.GetClient())}
		r := &controllers.TaskRunReconciler{
			Client:         h.writes,
			Scheme:         mgr.GetScheme(),
			Recorder:       mgr.GetEventRecorder("minitask-controller"),
			DefaultTimeout: time.Hour,
		}
		configure(r)
		return r.SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache = runcache.Options() })
}

// retrying returns run with spec.retries and spec.retryOn set.
func retrying(run *v1.TaskRun, retries int32, on ...v1.RetryReason) *v1.TaskRun {
	run.Spec.Retries, run.Spec.RetryOn = ptr.To(retries), on
	return run
}

// attempt is the part of a status.attempts entry that the tests assert.
type attempt struct{ PodName, Reason, Message string }

// attemptsOf returns run's status.attempts as the tests assert them, and
// fails the test if an attempt lacks its times.
func attemptsOf(t *testing.T, run *v1.TaskRun) []attempt {
	t.Helper()
	var out []attempt
	for _, a := range run.Status.Attempts {
		if a.StartTime == nil || a.CompletionTime == nil || a.CompletionTime.Before(a.StartTime) {
			t.Errorf("TaskRun %s: attempt %s has startTime %v and completionTime %v, want both, in order", run.Name, a.PodName, a.StartTime, a.CompletionTime)
		}
		out = append(out, attempt{a.PodName, a.Reason, a.Message})
	}
	return out
}

// podNames lists the names of the Pods that minitask runs for a TaskRun, sorted.
func (h *harness) podNames(t *testing.T, run string) []string {
	t.Helper()
	var names []string
	for _, pod := range h.pods(t, run) {
		names = append(names, pod.Name)
	}
	slices.Sort(names)
	return names
}

const lowMemory = "The node was low on resource: memory."

// TestRetries plays the kubelet through each way an attempt can end, and
// checks which are retried, the run's final condition, its attempts and its
// Pods: one per attempt, every one kept.
func TestRetries(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	evicted := func(w *wrappers.PodStatusWrapper) { w.Evicted(1, lowMemory) }

	tests := map[string]struct {
		run *v1.TaskRun
		// act plays the kubelet or the user, attempt after attempt.
		act          func(t *testing.T, h *harness)
		want         condition
		wantAttempts []attempt
		wantPods     []string
		wantEvents   []string
	}{
		"evicted, then succeeds": {
			run: retrying(wrappers.TaskRun("", "evicted", "t").Obj(), 2),
			act: func(t *testing.T, h *harness) {
				h.Kubelet(t, "evicted-pod", evicted)
				h.waitForCondition(t, "evicted", condition{metav1.ConditionUnknown, v1.ReasonRetrying,
					`attempt 1 of 3 failed (PodFailed): Pod "evicted-pod" was evicted: ` + lowMemory + `; attempt 2: Pod "evicted-pod-retry1" has not started a step yet`})
				h.Kubelet(t, "evicted-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
				h.waitForCondition(t, "evicted", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
				h.Kubelet(t, "evicted-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
			},
			want:         condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantAttempts: []attempt{{"evicted-pod", "PodFailed", `Pod "evicted-pod" was evicted: ` + lowMemory}},
			wantPods:     []string{"evicted-pod", "evicted-pod-retry1"},
			wantEvents:   []string{"Retrying x1", "Running x1", "Started x1", "Succeeded x1"},
		},
		"step failed, not in retryOn": {
			run:      retrying(wrappers.TaskRun("", "step-failed", "t").Obj(), 2),
			act:      kubeletSays("step-failed-pod", func(w *wrappers.PodStatusWrapper) { w.StepFailed(1, 3) }),
			want:     condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "second" exited with code 3`},
			wantPods: []string{"step-failed-pod"},
		},
		"step failed, in retryOn": {
			run: retrying(wrappers.TaskRun("", "step-retried", "t").Obj(), 1, v1.RetryOnStepFailed),
			act: func(t *testing.T, h *harness) {
				h.Kubelet(t, "step-retried-pod", func(w *wrappers.PodStatusWrapper) { w.StepFailed(0, 3) })
				h.Kubelet(t, "step-retried-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
			},
			want:         condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantAttempts: []attempt{{"step-retried-pod", "StepFailed", `step "first" exited with code 3`}},
			wantPods:     []string{"step-retried-pod", "step-retried-pod-retry1"},
		},
		"retries exhausted: the last failure stands": {
			run: retrying(wrappers.TaskRun("", "exhausted", "t").Obj(), 1),
			act: func(t *testing.T, h *harness) {
				h.Kubelet(t, "exhausted-pod", evicted)
				h.Kubelet(t, "exhausted-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Evicted(0, "The node had condition: [DiskPressure].") })
			},
			want:         condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "exhausted-pod-retry1" was evicted: The node had condition: [DiskPressure].`},
			wantAttempts: []attempt{{"exhausted-pod", "PodFailed", `Pod "exhausted-pod" was evicted: ` + lowMemory}},
			wantPods:     []string{"exhausted-pod", "exhausted-pod-retry1"},
			wantEvents:   []string{"Failed x1", "Retrying x1", "Started x1"},
		},
		"Pod deleted: retried": {
			run: retrying(wrappers.TaskRun("", "pod-deleted", "t").Obj(), 1),
			act: func(t *testing.T, h *harness) {
				deletePodWhileRunning("pod-deleted")(t, h)
				h.Kubelet(t, "pod-deleted-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
			},
			want:         condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			wantAttempts: []attempt{{"pod-deleted-pod", "PodFailed", `Pod "pod-deleted-pod" was deleted before the run finished`}},
			wantPods:     []string{"pod-deleted-pod-retry1"},
		},
		"cancel is not retried": {
			run: retrying(wrappers.TaskRun("", "cancelled", "t").Obj(), 2),
			act: func(t *testing.T, h *harness) {
				h.Kubelet(t, "cancelled-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
				h.waitForCondition(t, "cancelled", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
				h.UpdateTaskRun(t, "cancelled", func(r *v1.TaskRun) { r.Spec.Status = v1.TaskRunSpecStatusCancelled })
				h.waitForCondition(t, "cancelled", condition{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "cancelled" was cancelled`})
				// The kubelet kills the Pod at its lowered deadline.
				h.Kubelet(t, "cancelled-pod", func(w *wrappers.PodStatusWrapper) { w.DeadlineExceeded(0) })
			},
			want:     condition{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "cancelled" was cancelled`},
			wantPods: []string{"cancelled-pod"},
		},
	}
	h.Create(t, twoSteps("t"))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h.Create(t, tc.run)
			tc.act(t, h)
			run := h.waitForCondition(t, tc.run.Name, tc.want)
			if diff := cmp.Diff(tc.wantAttempts, attemptsOf(t, run)); diff != "" {
				t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
			}
			current := tc.wantPods[len(tc.wantPods)-1]
			if run.Status.PodName != current {
				t.Errorf("status.podName = %q, want the last attempt's, %q", run.Status.PodName, current)
			}
			// Nothing more comes: no Pod for an attempt the run does not make.
			consistently(t, time.Second, func() (bool, string) {
				got := h.podNames(t, tc.run.Name)
				return slices.Equal(got, tc.wantPods), cmp.Diff(tc.wantPods, got)
			})
			if tc.wantEvents != nil {
				testenv.Eventually(t, func() (bool, string) {
					got := h.events(t, tc.run.Name)
					slices.Sort(got)
					return slices.Equal(tc.wantEvents, got), cmp.Diff(tc.wantEvents, got)
				}, "one Event per transition and per failed attempt (-want +got)")
			}
		})
	}
}

// TestTimeoutCountsOverAttempts checks that a retry's Pod gets only what is
// left of the run's timeout, counted from the first attempt's start, and
// that the timeout then ends the run, not retried.
func TestTimeoutCountsOverAttempts(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, twoSteps("t"), retrying(wrappers.TaskRun("", "slow", "t").Timeout(5*time.Second).Obj(), 3))
	h.Kubelet(t, "slow-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
	time.Sleep(2 * time.Second)
	h.Kubelet(t, "slow-pod", func(w *wrappers.PodStatusWrapper) { w.Evicted(0, lowMemory) })

	retry := h.WaitForPod(t, "slow-pod-retry1")
	if ads := retry.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 4 {
		t.Errorf("the retry of a 5s run whose first attempt ran 2s has activeDeadlineSeconds %v, want at most 4", ptr.Deref(ads, 0))
	}
	h.Kubelet(t, "slow-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Running(1) })
	run := h.waitForCondition(t, "slow", condition{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "slow" did not finish within 5s`})
	if took := run.Status.CompletionTime.Sub(run.Status.StartTime.Time); took < 5*time.Second || took > 8*time.Second {
		t.Errorf("the run timed out %s after its first attempt started, want 5s (to 8s)", took)
	}
	if diff := cmp.Diff([]attempt{{"slow-pod", "PodFailed", `Pod "slow-pod" was evicted: ` + lowMemory}}, attemptsOf(t, run)); diff != "" {
		t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
	}
	checkSteps(t, run, "first=Terminated/Completed", "second=Terminated/TaskRunTimeout")
	if got := h.podNames(t, "slow"); !slices.Equal(got, []string{"slow-pod", "slow-pod-retry1"}) {
		t.Errorf("Pods %q, want the two attempts'", got)
	}
}

// errManagerKilled is what a manager "killed" before its status patch sees.
var errManagerKilled = errors.New("the manager was killed before its status patch")

// statusNeverWritten is a client whose status patches all fail, as if the
// manager died after every other write of a reconcile.
type statusNeverWritten struct{ client.Client }

func (c statusNeverWritten) Status() client.SubResourceWriter { return failingStatus{} }

type failingStatus struct{ client.SubResourceWriter }

func (failingStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errManagerKilled
}

func (failingStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errManagerKilled
}

// TestRetriesSurviveManagerRestarts checks that retries are idempotent from
// any stored state: a manager that dies after creating the next attempt's
// Pod but before recording the attempt, over and over, leaves one Pod per
// attempt; one that starts while two attempts failed unrecorded records both,
// skips none, and creates no second Pod for either; and a manager down while
// an attempt fails picks up from the status it finds.
func TestRetriesSurviveManagerRestarts(t *testing.T) {
	h := newHarness(t)
	h.Create(t, twoSteps("t"), retrying(wrappers.TaskRun("", "crashy", "t").Obj(), 3))

	// A manager whose every status patch is lost: it creates the first
	// attempt's Pod and, once that is evicted, the second's, and keeps
	// trying to record them.
	stop := h.startControllerOn(t, func(c client.Client) client.Client { return statusNeverWritten{c} }, func(*controllers.TaskRunReconciler) {})
	h.Kubelet(t, "crashy-pod", func(w *wrappers.PodStatusWrapper) { w.Evicted(0, lowMemory) })
	h.WaitForPod(t, "crashy-pod-retry1")
	time.Sleep(time.Second) // a few more reconciles of the same stale status
	stop()
	lost := h.writes
	if got := h.TaskRun(t, "crashy").Status; got.PodName != "" || len(got.Attempts) != 0 {
		t.Fatalf("the killed manager recorded status %+v, want none", got)
	}
	// While no manager runs, the second attempt fails too.
	h.Kubelet(t, "crashy-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Evicted(1, lowMemory) })

	// The next manager reads a status two attempts behind: it records both,
	// finding the second's Pod, and starts the third.
	stop = h.startController(t, time.Hour)
	h.waitForCondition(t, "crashy", condition{metav1.ConditionUnknown, v1.ReasonRetrying,
		`attempt 2 of 4 failed (PodFailed): Pod "crashy-pod-retry1" was evicted: ` + lowMemory + `; attempt 3: Pod "crashy-pod-retry2" has not started a step yet`})
	h.Kubelet(t, "crashy-pod-retry2", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	run := h.waitForCondition(t, "crashy", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	want := []attempt{
		{"crashy-pod", "PodFailed", `Pod "crashy-pod" was evicted: ` + lowMemory},
		{"crashy-pod-retry1", "PodFailed", `Pod "crashy-pod-retry1" was evicted: ` + lowMemory},
	}
	if diff := cmp.Diff(want, attemptsOf(t, run)); diff != "" {
		t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
	}
	stop()
	// A run that never started (here, whose status was never written) looks
	// its Pod up in the cache alone, which does not hold an ended Pod: a
	// manager may try to create one again, and learns from AlreadyExists to
	// read it from the API server. It must never create a second.
	for _, pod := range []string{"crashy-pod", "crashy-pod-retry1", "crashy-pod-retry2"} {
		creates := 0
		for _, w := range append(lost.of(pod), h.writes.of(pod)...) {
			switch {
			case w.Verb != "create":
			case w.Err == "":
				creates++
			case !strings.Contains(w.Err, "already exists"):
				t.Errorf("creating Pod %s failed with %q; only AlreadyExists may refuse it", pod, w.Err)
			}
		}
		if creates != 1 {
			t.Errorf("Pod %s was created %d times over both managers, want once", pod, creates)
		}
	}
	if got, want := h.podNames(t, "crashy"), []string{"crashy-pod", "crashy-pod-retry1", "crashy-pod-retry2"}; !slices.Equal(got, want) {
		t.Errorf("Pods %q, want %q", got, want)
	}

	// A manager that is down whenever an attempt fails.
	h.Create(t, retrying(wrappers.TaskRun("", "restarted", "t").Obj(), 3))
	stop = h.startController(t, time.Hour)
	h.WaitForPod(t, "restarted-pod")
	stop()
	h.Kubelet(t, "restarted-pod", func(w *wrappers.PodStatusWrapper) { w.Evicted(0, lowMemory) })
	stop = h.startController(t, time.Hour)
	h.WaitForPod(t, "restarted-pod-retry1")
	h.waitForCondition(t, "restarted", condition{metav1.ConditionUnknown, v1.ReasonRetrying,
		`attempt 1 of 4 failed (PodFailed): Pod "restarted-pod" was evicted: ` + lowMemory + `; attempt 2: Pod "restarted-pod-retry1" has not started a step yet`})
	stop()
	h.Kubelet(t, "restarted-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Evicted(1, lowMemory) })
	h.startController(t, time.Hour)
	h.Kubelet(t, "restarted-pod-retry2", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	run = h.waitForCondition(t, "restarted", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	want = []attempt{
		{"restarted-pod", "PodFailed", `Pod "restarted-pod" was evicted: ` + lowMemory},
		{"restarted-pod-retry1", "PodFailed", `Pod "restarted-pod-retry1" was evicted: ` + lowMemory},
	}
	if diff := cmp.Diff(want, attemptsOf(t, run)); diff != "" {
		t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
	}
	if got, want := h.podNames(t, "restarted"), []string{"restarted-pod", "restarted-pod-retry1", "restarted-pod-retry2"}; !slices.Equal(got, want) {
		t.Errorf("Pods %q, want %q", got, want)
	}
	if run.Status.PodName != "restarted-pod-retry2" {
		t.Errorf("status.podName = %q, want the third attempt's", run.Status.PodName)
	}
	// The attempts follow each other: each starts when the one before failed.
	if a := run.Status.Attempts; !a[1].StartTime.Equal(a[0].CompletionTime) || !a[0].StartTime.Equal(run.Status.StartTime) {
		t.Errorf("attempts' times do not follow each other: %+v (run started %v)", a, run.Status.StartTime)
	}
}
