package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// quietWindow is how long a finished run is watched for any change.
const quietWindow = 5 * time.Second

// TestFinishedRunsAreFinal checks that a finished run is never written or
// started again, whatever version wrote it and whatever happens to its Pod.
func TestFinishedRunsAreFinal(t *testing.T) {
	h := newHarness(t)
	h.Create(t, twoSteps("t"))

	// Written through v1alpha1 as Succeeded before any controller saw it.
	alpha := &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "alpha-succeeded"}, Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
	h.Create(t, alpha)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	alpha.Status = v1alpha1.TaskRunStatus{Phase: v1alpha1.TaskRunPhaseSucceeded, StartTime: &now, FinishTime: &now}
	if err := env.Client.Status().Update(context.Background(), alpha); err != nil {
		t.Fatalf("writing phase Succeeded through v1alpha1: %v", err)
	}

	h.startController(t, time.Hour)

	t.Run("v1alpha1 Succeeded is never started", func(t *testing.T) {
		t.Parallel()
		run := h.waitForCondition(t, "alpha-succeeded", condition{metav1.ConditionTrue, v1.ReasonSucceeded, ""})
		h.expectUntouched(t, run)
	})
	t.Run("no hot loop after finishing", func(t *testing.T) {
		t.Parallel()
		h.Create(t, wrappers.TaskRun("", "quiet", "t").Obj())
		kubeletSays("quiet-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })(t, h)
		run := h.waitForCondition(t, "quiet", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
		h.expectUntouched(t, run)
	})
	t.Run("deleting a finished run's Pod changes nothing", func(t *testing.T) {
		t.Parallel()
		h.Create(t, wrappers.TaskRun("", "final", "t").Obj())
		kubeletSays("final-pod", func(w *wrappers.PodStatusWrapper) { w.StepFailed(1, 2) })(t, h)
		run := h.waitForCondition(t, "final", condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "second" exited with code 2`})
		if err := env.Client.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "final-pod"}}); err != nil {
			t.Fatal(err)
		}
		h.expectUntouched(t, run)
	})
}

// expectUntouched fails the test if, for quietWindow, run changes in any way
// or gets a Pod it does not have now.
func (h *harness) expectUntouched(t *testing.T, run *v1.TaskRun) {
	t.Helper()
	consistently(t, quietWindow, func() (bool, string) {
		now := h.TaskRun(t, run.Name)
		if now.ResourceVersion != run.ResourceVersion {
			return false, "the finished run changed:\n" + cmp.Diff(run.Status, now.Status)
		}
		for _, pod := range h.pods(t, run.Name) {
			if pod.DeletionTimestamp == nil && pod.CreationTimestamp.After(run.Status.CompletionTime.Time) {
				return false, "a Pod was created for the finished run: " + pod.Name
			}
		}
		return true, ""
	})
}

// TestHappyPathCost runs one TaskRun through create, pending, running and
// succeeded, and counts what the controller does for it: API writes, Events
// and metrics.
func TestHappyPathCost(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	succeededBefore := metricValue(t, "minitask_taskruns_total", "Succeeded")
	durationsBefore := metricValue(t, "minitask_taskrun_duration_seconds", "Succeeded")

	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "happy", "t").Obj())
	kubeletSays("happy-pod", func(*wrappers.PodStatusWrapper) {})(t, h) // pending: every container waits
	testenv.Eventually(t, func() (bool, string) {
		steps := h.TaskRun(t, "happy").Status.Steps
		return len(steps) > 0 && steps[0].Reason == "ContainerCreating", "first step not reported waiting for its container"
	}, "the pending Pod to be reported")
	kubeletSays("happy-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })(t, h)
	h.waitForCondition(t, "happy", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
	kubeletSays("happy-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })(t, h)
	h.waitForCondition(t, "happy", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})

	writes := append(h.writes.of("happy"), h.writes.of("happy-pod")...)
	t.Logf("API writes for one run: %d: %+v", len(writes), writes)
	const maxWrites = 5
	if len(writes) > maxWrites {
		t.Errorf("the controller made %d API writes for one run, want at most %d: %+v", len(writes), maxWrites, writes)
	}

	want := []string{"Running x1", "Started x1", "Succeeded x1"}
	testenv.Eventually(t, func() (bool, string) {
		got := h.events(t, "happy")
		slices.Sort(got)
		return slices.Equal(want, got), cmp.Diff(want, got)
	}, "one Event per transition (-want +got)")

	if got := metricValue(t, "minitask_taskruns_total", "Succeeded") - succeededBefore; got != 1 {
		t.Errorf("minitask_taskruns_total{reason=Succeeded} grew by %v, want 1", got)
	}
	if got := metricValue(t, "minitask_taskrun_duration_seconds", "Succeeded") - durationsBefore; got != 1 {
		t.Errorf("minitask_taskrun_duration_seconds{reason=Succeeded} observed %v runs, want 1", got)
	}
}

// TestStartRecordedWithTheEnd runs a TaskRun whose Pod has ended before the
// controller looks at the run again, as in a burst, when the work queue is
// long: the reconcile that created the Pod wrote no status, so one status
// patch records the start and the end, with an Event for each, and the start
// is the Pod's creation. The run gives its spec inline: a run of a Task
// pins the Task's spec in the write that records its first Pod, as soon as
// the Pod exists (docs/lifecycle.md, "Which spec a run runs"), and so
// writes its status twice.
func TestStartRecordedWithTheEnd(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	kubeletErrs := make(chan error, 1)
	h.writes.onCreate(func(obj client.Object) {
		if pod, ok := obj.(*corev1.Pod); ok {
			kubeletErrs <- endBeforeTheControllerLooks(h.writes.Client, pod)
		}
	})

	h.Create(t, wrappers.TaskRun("", "quick", "").Inline(twoSteps("t").Spec).Obj())
	if err := <-kubeletErrs; err != nil {
		t.Fatalf("ending the Pod as it was created: %v", err)
	}
	h.waitForCondition(t, "quick", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})

	var got []string
	for _, w := range h.writes.of("quick") {
		got = append(got, w.Verb)
	}
	if want := []string{"patch status"}; !slices.Equal(got, want) {
		t.Errorf("the controller's writes to the run: %v, want %v", got, want)
	}
	want := []string{"Started x1", "Succeeded x1"}
	testenv.Eventually(t, func() (bool, string) {
		got := h.events(t, "quick")
		slices.Sort(got)
		return slices.Equal(want, got), cmp.Diff(want, got)
	}, "an Event for the start and one for the end (-want +got)")
	run, pod := h.TaskRun(t, "quick"), &corev1.Pod{}
	if err := env.Client.Get(context.Background(), h.Key("quick-pod"), pod); err != nil {
		t.Fatal(err)
	}
	if run.Status.StartTime == nil || !run.Status.StartTime.Equal(&pod.CreationTimestamp) {
		t.Errorf("status.startTime %v, want the Pod's creation %v", run.Status.StartTime, pod.CreationTimestamp)
	}
	if run.Status.PodName != pod.Name {
		t.Errorf("status.podName %q, want %q", run.Status.PodName, pod.Name)
	}
}

// endBeforeTheControllerLooks ends pod, which the controller has just
// created, as the kubelet would, and returns once the controller's cache
// (which cached reads) has seen it appear and then dropped it, as the cache
// drops every Pod that has ended: whatever reconciles the run next finds no
// Pod in its cache, as after a long wait in the work queue.
func endBeforeTheControllerLooks(cached client.Reader, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inCache := func(want bool) error {
		return wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := cached.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			return (err == nil) == want, nil
		})
	}
	if err := inCache(true); err != nil {
		return fmt.Errorf("waiting for the cache to hold Pod %s: %w", pod.Name, err)
	}
	ended := pod.DeepCopy()
	ended.Status = wrappers.PodStatus(ended).Succeeded().Obj()
	if err := env.Client.Status().Update(ctx, ended); err != nil {
		return fmt.Errorf("ending Pod %s: %w", pod.Name, err)
	}
	if err := inCache(false); err != nil {
		return fmt.Errorf("waiting for the cache to drop the ended Pod %s: %w", pod.Name, err)
	}
	return nil
}

// metricValue reads a counter's value, or a histogram's sample count, for one
// reason from controller-runtime's registry.
func metricValue(t *testing.T, name, reason string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "reason" || l.GetValue() != reason {
					continue
				}
				if m.GetHistogram() != nil {
					return float64(m.GetHistogram().GetSampleCount())
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
