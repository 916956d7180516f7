package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodConfigTimeout checks --pod-config-timeout: a step whose container
// the kubelet cannot make, or a volume it cannot mount (which only its Event
// says), shows in the Pending message at once, with the kubelet's reason and
// message; past the timeout the run ends PodConfigFailed, naming the step or
// the volume, not retried, and its Pod, which no step started, is deleted. A
// cause that clears in time lets the run go on.
func TestPodConfigTimeout(t *testing.T) {
	h := newHarness(t)
	const timeout = 3 * time.Second
	h.startControllerWith(t, func(r *controllers.TaskRunReconciler) { r.PodConfigTimeout = timeout })
	h.Create(t, twoSteps("t"), wrappers.Task("", "ws").Workspace("settings").Step("read", "alpine:3", "true").Obj())
	const secretMissing = `secret "git" not found`

	t.Run("a missing Secret that lasts", func(t *testing.T) {
		t.Parallel()
		h.Create(t, retrying(wrappers.TaskRun("", "lasting", "t").Obj(), 2))
		h.Kubelet(t, "lasting-pod", func(w *wrappers.PodStatusWrapper) { w.Waiting(0, "CreateContainerConfigError", secretMissing) })
		h.waitForCondition(t, "lasting", condition{metav1.ConditionUnknown, v1.ReasonPending,
			`step "first": CreateContainerConfigError: ` + secretMissing})
		seen := time.Now()
		run := h.waitForCondition(t, "lasting", condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
			`step "first" could not start for 3s: CreateContainerConfigError: ` + secretMissing})
		if took := time.Since(seen); took < timeout-time.Second {
			t.Errorf("the run failed %s after it was seen held back, want %s", took, timeout)
		}
		if len(run.Status.Attempts) != 0 {
			t.Errorf("PodConfigFailed was retried: attempts %+v", run.Status.Attempts)
		}
		for _, step := range run.Status.Steps {
			if step.State != v1.StepTerminated || step.Reason != string(v1.ReasonPodConfigFailed) {
				t.Errorf("step %q of a run that ended PodConfigFailed is %s/%s, want Terminated/PodConfigFailed", step.Name, step.State, step.Reason)
			}
		}
		testenv.Eventually(t, func() (bool, string) {
			return isNotFound(h.Key("lasting-pod"), &corev1.Pod{}), "it still exists"
		}, "Pod lasting-pod to be deleted")
	})
	t.Run("a missing Secret created in time", func(t *testing.T) {
		t.Parallel()
		h.Create(t, wrappers.TaskRun("", "cleared", "t").Obj())
		h.Kubelet(t, "cleared-pod", func(w *wrappers.PodStatusWrapper) { w.Waiting(0, "CreateContainerConfigError", secretMissing) })
		h.waitForCondition(t, "cleared", condition{metav1.ConditionUnknown, v1.ReasonPending,
			`step "first": CreateContainerConfigError: ` + secretMissing})
		h.Kubelet(t, "cleared-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
		h.waitForCondition(t, "cleared", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
		consistently(t, timeout+time.Second, func() (bool, string) {
			got := succeededCondition(h.TaskRun(t, "cleared"))
			return got.Reason == v1.ReasonRunning, fmt.Sprintf("the run is %+v, want it Running", got)
		})
	})
	t.Run("a volume that cannot mount", func(t *testing.T) {
		t.Parallel()
		h.Create(t, wrappers.TaskRun("", "unmounted", "ws").Workspace(v1.WorkspaceBinding{Name: "settings",
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}).Obj())
		const failed = `MountVolume.SetUp failed for volume "ws-settings" : configmap "settings" not found`
		pod := kubeletCannotMount(t, h, "unmounted-pod", failed)
		h.waitForCondition(t, "unmounted", condition{metav1.ConditionUnknown, v1.ReasonPending,
			`volume "ws-settings": FailedMount: ` + failed})
		h.waitForCondition(t, "unmounted", condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
			`volume "ws-settings" could not be mounted for 3s: FailedMount: ` + failed})
		// Bound to a node, it is gone only once a kubelet says so: none does here.
		testenv.Eventually(t, func() (bool, string) {
			err := h.Env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod)
			return err == nil && pod.DeletionTimestamp != nil, fmt.Sprintf("deletionTimestamp %v, %v", pod.DeletionTimestamp, err)
		}, "Pod unmounted-pod to be deleted")
	})
}

// TestPodConfigWaitSurvivesARestart: the wait counts from when the
// controller first saw the Pod held back, which it records on the Pod, not
// from when a manager started: a manager down for most of the timeout fails
// the run soon after it starts again.
func TestPodConfigWaitSurvivesARestart(t *testing.T) {
	h := newHarness(t)
	const timeout = 8 * time.Second
	configure := func(r *controllers.TaskRunReconciler) { r.PodConfigTimeout = timeout }
	stop := h.startControllerOn(t, func(c client.Client) client.Client { return c }, configure)
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "run", "t").Obj())
	h.Kubelet(t, "run-pod", func(w *wrappers.PodStatusWrapper) { w.Waiting(0, "CreateContainerError", "context deadline exceeded") })
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonPending, `step "first": CreateContainerError: context deadline exceeded`})
	var since time.Time
	testenv.Eventually(t, func() (bool, string) {
		record := h.WaitForPod(t, "run-pod").Annotations["minitask.dev/held-since"]
		var held struct {
			Container string
			Since     time.Time
		}
		err := json.Unmarshal([]byte(record), &held)
		since = held.Since
		return err == nil && held.Container == "step-first" && !since.IsZero(), fmt.Sprintf("annotation %q", record)
	}, "the Pod to record when it was first held back")
	stop()

	time.Sleep(timeout / 2)
	restarted := time.Now()
	h.startControllerOn(t, func(c client.Client) client.Client { return c }, configure)
	run := h.waitForCondition(t, "run", condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
		`step "first" could not start for 8s: CreateContainerError: context deadline exceeded`})
	if ended := run.Status.CompletionTime.Time; ended.Before(since.Add(timeout)) || !ended.Before(restarted.Add(timeout-time.Second)) {
		t.Errorf("the run ended at %s; want it %s after it was first seen held back (%s), not %s after the restart (%s)",
			ended, timeout, since, timeout, restarted)
	}
}

// kubeletCannotMount plays a kubelet that took the Pod up (binding it to a
// node of its own, ready, reporting its sandbox not made and its containers
// waiting to be) and cannot mount one of its volumes, which it says in a
// FailedMount Event with message. It returns the Pod.
func kubeletCannotMount(t *testing.T, h *harness, name, message string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	node := h.NS + "-" + name
	h.createNode(t, node)
	h.bindPod(t, name, node)
	pod := h.WaitForPod(t, name)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.Env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status = wrappers.PodStatus(pod).Obj()
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()})
		return h.Env.Client.Status().Update(ctx, pod)
	})
	if err != nil {
		t.Fatalf("writing the status of Pod %s: %v", name, err)
	}
	now := metav1.Now()
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name + ".failedmount"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID},
		Reason: "FailedMount", Message: message, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := h.Env.Client.Create(ctx, event); err != nil {
		t.Fatalf("creating the FailedMount Event of Pod %s: %v", name, err)
	}
	return pod
}
