package controllers_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestNameReusedWhileTheEarlierPodEnded re-creates a finished run under its
// name while its ended Pod is left for the garbage collector (envtest runs
// none: the test plays it). The cache holds no ended Pod, so the Pod's
// deletion sends the new run no event: the run must look again by itself and
// get its own Pod, long before its hour-long timeout.
func TestNameReusedWhileTheEarlierPodEnded(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "reused", "t").Obj())
	h.startController(t, time.Hour)
	kubeletSays("reused-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })(t, h)
	earlier := h.waitForCondition(t, "reused", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})

	if err := env.Client.Delete(ctx, earlier); err != nil {
		t.Fatalf("deleting the finished run: %v", err)
	}
	testenv.Eventually(t, func() (bool, string) {
		return len(h.TaskRunNames(t)) == 0, "the run is still there"
	}, "the finished run to be deleted")
	h.Create(t, wrappers.TaskRun("", "reused", "t").Obj())
	h.waitForCondition(t, "reused", condition{metav1.ConditionUnknown, v1.ReasonPending,
		`waiting for Pod "reused-pod" of an earlier TaskRun named "reused" to be deleted`})

	// The garbage collector removes the earlier run's Pod.
	if err := env.Client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "reused-pod"}}); err != nil {
		t.Fatalf("deleting the earlier run's Pod: %v", err)
	}
	run := h.TaskRun(t, "reused")
	testenv.Eventually(t, func() (bool, string) {
		pod := &corev1.Pod{}
		if err := env.Client.Get(ctx, h.Key("reused-pod"), pod); err != nil {
			return false, err.Error()
		}
		return metav1.IsControlledBy(pod, run), "the Pod is the earlier run's"
	}, "the new run to create its Pod")
	h.waitForCondition(t, "reused", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "reused-pod" has not started a step yet`})
}
