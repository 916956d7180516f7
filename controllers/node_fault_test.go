package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The API server holds Nodes and Pods as a cluster does, but no kubelet,
// node lifecycle controller, taint manager or Pod garbage collector runs
// here: the tests play them, binding a run's Pod to a Node, writing the
// Node's Ready condition, tainting and deleting it, and deleting the Pod.

// testNodeLostTimeout is the --node-lost-timeout of these tests' controller.
const testNodeLostTimeout = 2 * time.Second

// createNode creates a Node, its Ready condition True, and deletes it when
// the test ends if the test did not. Nodes are cluster-wide: name it after
// the test's namespace.
func (h *harness) createNode(t *testing.T, name string) {
	t.Helper()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", Message: "kubelet is posting ready status", LastTransitionTime: metav1.Now()}}},
	}
	if err := h.Env.Client.Create(context.Background(), node); err != nil {
		t.Fatalf("creating Node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = client.IgnoreNotFound(h.Env.Client.Delete(context.Background(), node)) })
}

// setNodeReady writes the Node's Ready condition as the node lifecycle
// controller does when its kubelet goes silent (Unknown) or as the kubelet
// does (True), with since as its lastTransitionTime.
func (h *harness) setNodeReady(t *testing.T, name string, status corev1.ConditionStatus, since time.Time) {
	t.Helper()
	reason, message := "KubeletReady", "kubelet is posting ready status"
	if status != corev1.ConditionTrue {
		reason, message = "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	h.updateNode(t, name, func(node *corev1.Node) error {
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.NewTime(since)}}
		return h.Env.Client.Status().Update(context.Background(), node)
	})
}

// taintNode adds taint to the Node, as an administrator does.
func (h *harness) taintNode(t *testing.T, name string, taint corev1.Taint) {
	t.Helper()
	h.updateNode(t, name, func(node *corev1.Node) error {
		node.Spec.Taints = append(node.Spec.Taints, taint)
		return h.Env.Client.Update(context.Background(), node)
	})
}

func (h *harness) updateNode(t *testing.T, name string, change func(*corev1.Node) error) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := h.Env.Client.Get(context.Background(), client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		return change(node)
	})
	if err != nil {
		t.Fatalf("updating Node %s: %v", name, err)
	}
}

// bindPod waits for the Pod, then binds it to node, as the scheduler does.
func (h *harness) bindPod(t *testing.T, pod, node string) {
	t.Helper()
	p := h.WaitForPod(t, pod)
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := h.Env.Client.SubResource("binding").Create(context.Background(), p, binding); err != nil {
		t.Fatalf("binding Pod %s to Node %s: %v", pod, node, err)
	}
}

// runOnNode creates run, binds its first Pod to node and lets its first
// step start, and waits until the run says so.
func (h *harness) runOnNode(t *testing.T, run *v1.TaskRun, node string) {
	t.Helper()
	h.Create(t, run)
	h.bindPod(t, run.Name+"-pod", node)
	h.Kubelet(t, run.Name+"-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
	h.waitForCondition(t, run.Name, condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
}

// unknownSince is how the messages give a Ready condition that the node
// lifecycle controller made Unknown at since.
func unknownSince(since time.Time) string {
	return "Ready is Unknown since " + since.UTC().Format(time.RFC3339) + ": NodeStatusUnknown: Kubelet stopped posting node status."
}

// fenceWait is the Retrying message of a run whose attempt 1 of n lost its
// Pod P with node N for why, and waits for that Pod to be fenced.
func fenceWait(pod, node string, n int, why string) string {
	return fmt.Sprintf(`attempt 1 of %d failed (PodFailed): Pod %q was lost with its node %q: %s; `+
		`attempt 1's Pod %q may still be running on node %q, which is not ready: `+
		`waiting for the node to be deleted, tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2`,
		n, pod, node, why, pod, node)
}

// TestNodeFaults plays a node's failures under running runs, and checks
// what becomes of each: ended PodFailed naming the node, within
// --node-lost-timeout of the node's Ready condition turning; with retries,
// no second attempt while the first one's Pod may still run; a timeout that
// says the Pod could not be stopped; and a node that comes back in time
// changing nothing.
func TestNodeFaults(t *testing.T) {
	h := newHarness(t)
	h.startControllerWith(t, func(r *controllers.TaskRunReconciler) { r.NodeLostTimeout = testNodeLostTimeout })
	h.Create(t, twoSteps("t"))
	nodeOf := func(run string) string { return h.NS + "-" + run }

	t.Run("not ready past the timeout: PodFailed naming the node, its Pod stopped", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("silent")
		h.createNode(t, node)
		h.runOnNode(t, wrappers.TaskRun("", "silent", "t").Obj(), node)
		pod := h.WaitForPod(t, "silent-pod")
		want := []corev1.Toleration{
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)},
		}
		if diff := cmp.Diff(want, pod.Spec.Tolerations); diff != "" {
			t.Errorf("the Pod's tolerations (-want +got):\n%s", diff)
		}

		since := time.Now().Truncate(time.Second)
		h.setNodeReady(t, node, corev1.ConditionUnknown, since)
		// Until the timeout, the run goes on, saying why it may seem stuck.
		h.waitForCondition(t, "silent", condition{metav1.ConditionUnknown, v1.ReasonRunning,
			fmt.Sprintf(`running step "first" (1 of 2); node %q: the node is not ready (%s)`, node, unknownSince(since))})
		run := h.waitForCondition(t, "silent", condition{metav1.ConditionFalse, v1.ReasonPodFailed,
			fmt.Sprintf(`Pod "silent-pod" was lost with its node %q: the node has not been ready for longer than 2s (%s)`, node, unknownSince(since))})
		if took := run.Status.CompletionTime.Sub(since); took < testNodeLostTimeout || took > testNodeLostTimeout+3*time.Second {
			t.Errorf("the run ended %s after its node's Ready condition turned Unknown, want %s (to 3s more)", took, testNodeLostTimeout)
		}
		// A kubelet that comes back kills the Pod at its lowered deadline.
		testenv.Eventually(t, func() (bool, string) {
			pod = h.WaitForPod(t, "silent-pod")
			ads := pod.Spec.ActiveDeadlineSeconds
			return ads != nil && *ads <= 60, fmt.Sprintf("activeDeadlineSeconds %v", ptr.Deref(ads, 0))
		}, "the lost Pod's deadline lowered")
		checkSteps(t, run, "first=Terminated/NodeLost", "second=Terminated/NodeLost")
	})

	t.Run("node deleted: PodFailed at once", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("deleted")
		h.createNode(t, node)
		h.runOnNode(t, wrappers.TaskRun("", "deleted", "t").Obj(), node)
		if err := h.Env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
			t.Fatal(err)
		}
		h.waitForCondition(t, "deleted", condition{metav1.ConditionFalse, v1.ReasonPodFailed,
			fmt.Sprintf(`Pod "deleted-pod" was lost with its node %q: the node was deleted`, node)})
		testenv.Eventually(t, func() (bool, string) {
			got := h.events(t, "deleted")
			return slices.Contains(got, "Failed x1"), fmt.Sprint(got)
		}, "a Failed Event")
	})

	t.Run("retries: no second attempt until the node is tainted out of service", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("fenced")
		h.createNode(t, node)
		h.runOnNode(t, retrying(wrappers.TaskRun("", "fenced", "t").Obj(), 2), node)
		since := time.Now().Add(-time.Minute).Truncate(time.Second)
		h.setNodeReady(t, node, corev1.ConditionUnknown, since)
		why := fmt.Sprintf("the node has not been ready for longer than 2s (%s)", unknownSince(since))
		h.waitForCondition(t, "fenced", condition{metav1.ConditionUnknown, v1.ReasonRetrying, fenceWait("fenced-pod", node, 3, why)})
		consistently(t, 2*time.Second, func() (bool, string) {
			got := h.podNames(t, "fenced")
			return slices.Equal(got, []string{"fenced-pod"}), fmt.Sprintf("Pods %q while the first attempt's may still run", got)
		})
		testenv.Eventually(t, func() (bool, string) {
			got := h.events(t, "fenced")
			return slices.Contains(got, "NodeLost x1"), fmt.Sprint(got)
		}, "a NodeLost Event")

		h.taintNode(t, node, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
		h.Kubelet(t, "fenced-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
		run := h.waitForCondition(t, "fenced", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
		want := []attempt{{"fenced-pod", "PodFailed",
			fmt.Sprintf(`Pod "fenced-pod" was lost with its node %q: the node is tainted node.kubernetes.io/out-of-service`, node)}}
		if diff := cmp.Diff(want, attemptsOf(t, run)); diff != "" {
			t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("retries: the next attempt once the lost Pod is gone", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("gone")
		h.createNode(t, node)
		h.runOnNode(t, retrying(wrappers.TaskRun("", "gone", "t").Obj(), 1), node)
		since := time.Now().Truncate(time.Second)
		h.setNodeReady(t, node, corev1.ConditionUnknown, since)
		// The taint manager evicts the Pod once its toleration has passed:
		// being deleted on a node that is not ready, the Pod is lost at once.
		pod := h.WaitForPod(t, "gone-pod")
		if err := h.Env.Client.Delete(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		why := fmt.Sprintf("the Pod was deleted while the node is not ready (%s)", unknownSince(since))
		h.waitForCondition(t, "gone", condition{metav1.ConditionUnknown, v1.ReasonRetrying, fenceWait("gone-pod", node, 2, why)})
		if got := h.podNames(t, "gone"); !slices.Equal(got, []string{"gone-pod"}) {
			t.Fatalf("Pods %q while the first attempt's may still run", got)
		}
		// Someone who knows the machine is off deletes the Pod for good.
		if err := h.Env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		h.Kubelet(t, "gone-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
		run := h.waitForCondition(t, "gone", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
		want := []attempt{{"gone-pod", "PodFailed", `Pod "gone-pod" was deleted before the run finished`}}
		if diff := cmp.Diff(want, attemptsOf(t, run)); diff != "" {
			t.Errorf("status.attempts mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("retries: the next attempt once a Pod deleted on a healthy node is gone", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("draining")
		h.createNode(t, node)
		h.runOnNode(t, retrying(wrappers.TaskRun("", "draining", "t").Obj(), 1), node)
		// Deleted with the grace period its kubelet (none here) would use
		// to stop its containers: they may still run meanwhile.
		pod := h.WaitForPod(t, "draining-pod")
		if err := h.Env.Client.Delete(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		h.waitForCondition(t, "draining", condition{metav1.ConditionUnknown, v1.ReasonRetrying,
			`attempt 1 of 2 failed (PodFailed): Pod "draining-pod" was deleted before the run finished; ` +
				`attempt 1's Pod "draining-pod" is being deleted and its steps may still run: waiting for it to be gone before attempt 2`})
		consistently(t, 2*time.Second, func() (bool, string) {
			got := h.podNames(t, "draining")
			return slices.Equal(got, []string{"draining-pod"}), fmt.Sprintf("Pods %q while the first attempt's may still run", got)
		})
		// The kubelet has stopped it.
		if err := h.Env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		h.Kubelet(t, "draining-pod-retry1", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
		h.waitForCondition(t, "draining", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	})

	t.Run("timeout while the lost Pod may still run", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("late")
		h.createNode(t, node)
		h.runOnNode(t, retrying(wrappers.TaskRun("", "late", "t").Timeout(5*time.Second).Obj(), 2), node)
		h.setNodeReady(t, node, corev1.ConditionUnknown, time.Now().Truncate(time.Second))
		h.waitForCondition(t, "late", condition{metav1.ConditionFalse, v1.ReasonTimeout,
			fmt.Sprintf(`TaskRun "late" did not finish within 5s; its Pod "late-pod" may still be running on node %q, which is not ready: no kubelet could stop it`, node)})
		if got := h.podNames(t, "late"); !slices.Equal(got, []string{"late-pod"}) {
			t.Errorf("Pods %q, want the one attempt's", got)
		}
		testenv.Eventually(t, func() (bool, string) {
			got := h.events(t, "late")
			i := slices.IndexFunc(got, func(e string) bool { return strings.HasPrefix(e, "TimedOut") })
			return i >= 0, fmt.Sprint(got)
		}, "a TimedOut Event")
	})

	t.Run("node ready again in time: nothing lost", func(t *testing.T) {
		t.Parallel()
		node := nodeOf("blip")
		h.createNode(t, node)
		h.runOnNode(t, wrappers.TaskRun("", "blip", "t").Obj(), node)
		h.setNodeReady(t, node, corev1.ConditionUnknown, time.Now().Truncate(time.Second))
		time.Sleep(testNodeLostTimeout / 2)
		h.setNodeReady(t, node, corev1.ConditionTrue, time.Now().Truncate(time.Second))
		consistently(t, 2*testNodeLostTimeout, func() (bool, string) {
			got := succeededCondition(h.TaskRun(t, "blip"))
			want := condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`}
			return got == want || strings.Contains(got.Message, "is not ready"), cmp.Diff(want, got)
		})
		h.waitForCondition(t, "blip", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
		h.Kubelet(t, "blip-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
		h.waitForCondition(t, "blip", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	})
}
