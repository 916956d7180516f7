package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodSpec checks the Pod as the API server stores it: steps in order as
// init containers plus the last as the container, params substituted, owned
// by the run, labelled, never restarted, bounded by the run's timeout.
func TestPodSpec(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	task := wrappers.Task("", "build").ParamDefault("tag", "3").ParamDefault("greeting", "hello").Param("target").
		Step("fetch", "alpine:$(params.tag)", `echo "$(params.greeting)" > /tmp/x`).
		Step("compile", "golang:1", "go build $(params.target)").
		Step("entrypoint", "registry.example/$(params.target):$(params.tag)", "").Obj()
	run := wrappers.TaskRun("", "build-1", "build").Param("greeting", "hi").Param("target", "app").Timeout(30 * time.Minute).Obj()
	h.Create(t, task, run)

	pod := h.WaitForPod(t, "build-1-pod")
	type container struct {
		Name    string
		Image   string
		Command []string
	}
	project := func(cs []corev1.Container) []container {
		var out []container
		for _, c := range cs {
			out = append(out, container{c.Name, c.Image, c.Command})
		}
		return out
	}
	wantInit := []container{
		{"step-fetch", "alpine:3", controllers.ScriptCommand(`echo "hi" > /tmp/x`, "", 3)},
		{"step-compile", "golang:1", controllers.ScriptCommand("go build app", "", 3)},
	}
	if diff := cmp.Diff(wantInit, project(pod.Spec.InitContainers)); diff != "" {
		t.Errorf("init containers mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]container{{"step-entrypoint", "registry.example/app:3", nil}}, project(pod.Spec.Containers)); diff != "" {
		t.Errorf("containers mismatch (-want +got):\n%s", diff)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %s, want Never", pod.Spec.RestartPolicy)
	}
	if ads := pod.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 1800 || *ads < 1790 {
		t.Errorf("activeDeadlineSeconds = %v, want what is left of 30m", ads)
	}
	wantLabels := map[string]string{runstate.LabelManagedBy: "minitask", runstate.LabelTaskRun: "build-1"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels mismatch (-want +got):\n%s", diff)
	}
	stored := h.TaskRun(t, "build-1")
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.UID != stored.UID || owner.Kind != "TaskRun" {
		t.Errorf("Pod's controller = %+v, want TaskRun build-1 (%s)", owner, stored.UID)
	}
}

// TestLongRunName checks that a run whose name fits no Pod name or label
// still gets one Pod, found again through its bounded name.
func TestLongRunName(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	name := "a-run-whose-name-is-far-too-long-for-a-pod-name-or-a-label-value-" + "0123456789"
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", name, "t").Obj())
	var run *v1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.TaskRun(t, name)
		return run.Status.PodName != "", "no podName yet"
	}, "TaskRun %s to have a Pod", name)
	if n := len(run.Status.PodName); n > 63 {
		t.Fatalf("podName %q has %d characters, want at most 63", run.Status.PodName, n)
	}
	var pods corev1.PodList
	if err := env.Client.List(context.Background(), &pods, client.InNamespace(h.NS)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != run.Status.PodName || len(pods.Items[0].Labels[runstate.LabelTaskRun]) > 63 {
		t.Fatalf("want one Pod, %s, with a label value of at most 63 characters; got %+v", run.Status.PodName, pods.Items)
	}
	h.Kubelet(t, run.Status.PodName, func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	h.waitForCondition(t, name, condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
}

// TestTaskCreatedLater starts a run whose Task appears 2 s after it: the
// run waits, with its clock started, and then runs.
func TestTaskCreatedLater(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, wrappers.TaskRun("", "early", "late").Obj())
	run := h.waitForCondition(t, "early", condition{metav1.ConditionUnknown, v1.ReasonWaitingForTask, `waiting for Task "late", which does not exist`})
	if run.Status.StartTime == nil {
		t.Fatal("a run waiting for its Task has no startTime; its timeout would not count")
	}
	startedAt := run.Status.StartTime.Time

	time.Sleep(time.Until(run.CreationTimestamp.Add(2 * time.Second))) // the scenario: the Task comes 2 s later
	h.Create(t, twoSteps("late"))
	h.waitForCondition(t, "early", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "early-pod" has not started a step yet`})
	kubeletSays("early-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })(t, h)
	run = h.waitForCondition(t, "early", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if !run.Status.StartTime.Time.Equal(startedAt) {
		t.Errorf("startTime moved from %s to %s when the Task appeared", startedAt, run.Status.StartTime.Time)
	}
}

// TestRestartKeepsOnePod stops the manager mid-run and starts a new one
// against the same API server: the run keeps its one Pod.
func TestRestartKeepsOnePod(t *testing.T) {
	h := newHarness(t)
	stop := h.startController(t, time.Hour)
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "restarted", "t").Obj())
	kubeletSays("restarted-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })(t, h)
	h.waitForCondition(t, "restarted", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
	stop()

	h.Kubelet(t, "restarted-pod", func(w *wrappers.PodStatusWrapper) { w.Running(1) })
	h.startController(t, time.Hour)
	h.waitForCondition(t, "restarted", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "second" (2 of 2)`})
	h.Kubelet(t, "restarted-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	h.waitForCondition(t, "restarted", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if pods := h.pods(t, "restarted"); len(pods) != 1 {
		t.Errorf("the run has %d Pods after a restart, want 1", len(pods))
	}
	if creates := countVerb(h.writes.of("restarted-pod"), "create"); creates != 0 {
		t.Errorf("the restarted controller tried to create the Pod %d times", creates)
	}
}

// TestPodGoneWhileControllerDown deletes a running run's Pod while no
// controller runs: the next one finds it gone and fails the run.
func TestPodGoneWhileControllerDown(t *testing.T) {
	h := newHarness(t)
	stop := h.startController(t, time.Hour)
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "orphaned", "t").Obj())
	kubeletSays("orphaned-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })(t, h)
	h.waitForCondition(t, "orphaned", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
	stop()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "orphaned-pod"}}
	if err := env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	h.startController(t, time.Hour)
	h.waitForCondition(t, "orphaned", condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "orphaned-pod" was deleted before the run finished`})
	if pods := h.pods(t, "orphaned"); len(pods) != 0 {
		t.Errorf("the run has %d Pods, want none: its Pod is not replaced", len(pods))
	}
}

// TestPodCreatedBeforeCrashIsTracked plays a controller that crashed between
// creating a run's Pod and recording it: the next one tracks that Pod.
func TestPodCreatedBeforeCrashIsTracked(t *testing.T) {
	h := newHarness(t)
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "crashed", "t").Obj())
	run := h.TaskRun(t, "crashed")
	pod := podLeftByCrash(run)
	h.Create(t, pod)

	h.startController(t, time.Hour)
	run = h.waitForCondition(t, "crashed", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "crashed-pod" has not started a step yet`})
	if run.Status.PodName != "crashed-pod" {
		t.Errorf("podName = %q, want crashed-pod", run.Status.PodName)
	}
	if run.Status.StartTime == nil || run.Status.StartTime.After(pod.CreationTimestamp.Time) {
		t.Errorf("startTime = %v, want the Pod's creation %s, when the run really started", run.Status.StartTime, pod.CreationTimestamp)
	}
	if pods := h.pods(t, "crashed"); len(pods) != 1 {
		t.Errorf("the run has %d Pods, want 1", len(pods))
	}
}

// podLeftByCrash is the Pod a controller created for run, named, labelled
// and owned as it does, before it crashed without recording it: one step.
func podLeftByCrash(run *v1.TaskRun) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: run.Name + "-pod", Labels: map[string]string{runstate.LabelManagedBy: "minitask", runstate.LabelTaskRun: run.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(run, v1.GroupVersion.WithKind("TaskRun"))}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "step-first", Image: "alpine:3"}}},
	}
}

// TestEndedPodCreatedBeforeCrashEndsTheRun plays a controller that crashed
// between creating a run's Pod and recording it, and a Pod that ended while
// no controller ran: the cache does not hold it, so the next controller's
// create finds it (AlreadyExists, and nothing else), and the run is recorded
// as that Pod ended, in one status write, with no second Pod.
func TestEndedPodCreatedBeforeCrashEndsTheRun(t *testing.T) {
	h := newHarness(t)
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "crashed", "t").Obj())
	run := h.TaskRun(t, "crashed")
	pod := podLeftByCrash(run)
	pod.Spec.InitContainers = []corev1.Container{{Name: "step-first", Image: "alpine:3"}}
	pod.Spec.Containers = []corev1.Container{{Name: "step-second", Image: "alpine:3"}}
	h.Create(t, pod)
	h.Kubelet(t, "crashed-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })

	h.startController(t, time.Hour)
	run = h.waitForCondition(t, "crashed", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if run.Status.PodName != "crashed-pod" {
		t.Errorf("podName = %q, want crashed-pod", run.Status.PodName)
	}
	var creates, statusWrites []write
	for _, w := range h.writes.of("") {
		switch {
		case w.Kind == "Pod" && w.Verb == "create":
			creates = append(creates, w)
		case w.Kind == "TaskRun":
			statusWrites = append(statusWrites, w)
		}
	}
	for _, w := range creates {
		if !strings.Contains(w.Err, "already exists") {
			t.Errorf("creating Pod %s: error %q, want AlreadyExists: the run has its Pod", w.Name, w.Err)
		}
	}
	if len(statusWrites) != 1 {
		t.Errorf("%d writes to the run, want 1, its end: %+v", len(statusWrites), statusWrites)
	}
	if pods := h.pods(t, "crashed"); len(pods) != 1 {
		t.Errorf("the run has %d Pods, want 1", len(pods))
	}
}

// TestNewRunReadsNoPodFromTheAPIServer checks that a run that never started
// looks its Pod up in the cache alone: a new run's Pod is created without a
// GET from the API server that finds no Pod. (A reconcile after the Pod's
// creation may read it from the API server if the cache does not hold it
// yet: that read finds it.)
func TestNewRunReadsNoPodFromTheAPIServer(t *testing.T) {
	h := newHarness(t)
	reads := &readCounter{Reader: h.Env.Client, counts: func(obj client.Object, err error) bool {
		_, isPod := obj.(*corev1.Pod)
		return isPod && apierrors.IsNotFound(err)
	}}
	h.startControllerOn(t, func(c client.Client) client.Client { return c }, func(r *controllers.TaskRunReconciler) { r.APIReader = reads })
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "fresh", "t").Obj())
	h.waitForCondition(t, "fresh", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "fresh-pod" has not started a step yet`})
	if n := reads.n.Load(); n != 0 {
		t.Errorf("the controller asked the API server %d times for a Pod that did not exist, want never", n)
	}
}

// TestEarlierReleasePodIsTracked runs a TaskRun whose status names a Pod that
// an earlier release started, without minitask's labels or owner: the
// controller creates no other Pod, adopts that one and follows it.
func TestEarlierReleasePodIsTracked(t *testing.T) {
	h := newHarness(t)
	legacy := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-runner"},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "step-only", Image: "alpine:3"}}},
	}
	h.Create(t, twoSteps("t"), legacy, wrappers.TaskRun("", "legacy", "t").Obj())
	run := h.TaskRun(t, "legacy")
	run.Status.PodName = "legacy-runner"
	run.Status.StartTime = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	if err := env.Client.Status().Update(context.Background(), run); err != nil {
		t.Fatal(err)
	}

	h.startController(t, time.Hour)
	h.waitForCondition(t, "legacy", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "legacy-runner" has not started a step yet`})
	h.Kubelet(t, "legacy-runner", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
	h.waitForCondition(t, "legacy", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "only" (1 of 1)`})
	h.Kubelet(t, "legacy-runner", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	h.waitForCondition(t, "legacy", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if !isNotFound(h.Key("legacy-pod"), &corev1.Pod{}) {
		t.Error("the controller created a Pod of its own for a run that has one")
	}
	adopted := h.WaitForPod(t, "legacy-runner")
	if owner := metav1.GetControllerOf(adopted); owner == nil || owner.Name != "legacy" || adopted.Labels[runstate.LabelManagedBy] != "minitask" {
		t.Errorf("Pod not adopted: controller %+v, labels %v", owner, adopted.Labels)
	}
}

func countVerb(writes []write, verb string) int {
	n := 0
	for _, w := range writes {
		if w.Verb == verb {
			n++
		}
	}
	return n
}
