package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These test what the controller decides for a run whose Pod's node fails,
// from the run, its Pod, the Node (a fake client holds them) and the clock.

// testNode returns the Node named n: Ready with status since since, and
// the taints given.
func testNode(status corev1.ConditionStatus, since time.Time, taints ...corev1.Taint) *corev1.Node {
	reason, message := "KubeletReady", "kubelet is posting ready status"
	if status != corev1.ConditionTrue {
		reason, message = "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(since)}}},
	}
}

var outOfServiceTaint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// TestEndOrRetryOnANodeFault decides, for a run whose Pod runs on node "n",
// what comes of each way the node can fail: the run's outcome, whether it
// records the attempt (and so moves on to the next one), and whether it
// stops the Pod (lowering its deadline, for a kubelet that comes back).
func TestEndOrRetryOnANodeFault(t *testing.T) {
	start := testTime.Add(-10 * time.Minute)
	silentSince := testTime.Add(-2 * time.Minute)
	running := func() *corev1.Pod {
		pod := threeStepPod()
		pod.Spec.NodeName = "n"
		pod.UID = "pod-uid"
		return withStatus(pod, wrappers.PodStatus(pod).At(start).Running(1).Obj())
	}
	deleting := func() *corev1.Pod {
		pod := running()
		pod.DeletionTimestamp = &metav1.Time{Time: testTime.Add(-time.Second)}
		pod.Finalizers = []string{"test/keep"} // a fake client refuses a deleted object without one
		return pod
	}
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour) }
	const unknownSince = "Ready is Unknown since 2026-01-01T11:58:00Z: NodeStatusUnknown: Kubelet stopped posting node status."
	lost := `Pod "run-pod" was lost with its node "n": the node has not been ready for longer than 1m0s (` + unknownSince + ")"
	stillRunning := `; its Pod "run-pod" may still be running on node "n", which is not ready: no kubelet could stop it`
	type want struct {
		Outcome       *outcome
		Attempts      int
		WaitsForFence bool
		// Stopped says that the Pod, which had no activeDeadlineSeconds, got one.
		Stopped bool
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		pod  *corev1.Pod
		node *corev1.Node // nil: deleted
		now  time.Time
		want want
	}{
		"node ready: the Pod goes on": {
			run: run().Obj(), pod: running(), node: testNode(corev1.ConditionTrue, silentSince), now: testTime,
		},
		"node not ready, not for long yet": {
			run: run().Obj(), pod: running(), node: testNode(corev1.ConditionUnknown, testTime.Add(-30*time.Second)), now: testTime,
		},
		"node not ready for longer than the timeout, no retries: PodFailed, the Pod stopped": {
			run: run().Obj(), pod: running(), node: testNode(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: failed(v1.ReasonPodFailed, "%s", lost), Stopped: true},
		},
		"node deleted, no retries": {
			run: run().Obj(), pod: running(), now: testTime,
			want: want{Outcome: failed(v1.ReasonPodFailed, `Pod "run-pod" was lost with its node "n": the node was deleted`), Stopped: true},
		},
		"node not ready, retries: the next attempt waits for the Pod to be fenced": {
			run: withRetries(run().Obj(), 2), pod: running(), node: testNode(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{WaitsForFence: true, Outcome: unknown(v1.ReasonRetrying, "attempt 1 of 3 failed (PodFailed): %s; "+
				`attempt 1's Pod "run-pod" may still be running on node "n", which is not ready: waiting for the node to be deleted, `+
				"tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2", lost)},
		},
		"evicted by the taint manager from a node not ready: lost at once, and waits": {
			run: withRetries(run().Obj(), 1), pod: deleting(), node: testNode(corev1.ConditionUnknown, testTime.Add(-10*time.Second)), now: testTime,
			want: want{WaitsForFence: true, Outcome: unknown(v1.ReasonRetrying, "attempt 1 of 2 failed (PodFailed): "+
				`Pod "run-pod" was lost with its node "n": the Pod was deleted while the node is not ready `+
				"(Ready is Unknown since 2026-01-01T11:59:50Z: NodeStatusUnknown: Kubelet stopped posting node status.); "+
				`attempt 1's Pod "run-pod" may still be running on node "n", which is not ready: waiting for the node to be deleted, `+
				"tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2")},
		},
		"node tainted out of service, retries: the attempt is recorded, the next one goes on": {
			run: withRetries(run().Obj(), 2), pod: running(), node: testNode(corev1.ConditionUnknown, silentSince, outOfServiceTaint), now: testTime,
			want: want{Attempts: 1, Stopped: true},
		},
		"node deleted, retries": {
			run: withRetries(run().Obj(), 2), pod: running(), now: testTime,
			want: want{Attempts: 1, Stopped: true},
		},
		"lost and timed out: the timeout, saying the Pod may still run": {
			run: withRetries(run().Timeout(5*time.Minute).Obj(), 2), pod: running(), node: testNode(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 5m0s%s`, stillRunning), Stopped: true},
		},
		"lost with a node deleted and timed out: the Pod runs nowhere": {
			run: run().Timeout(5 * time.Minute).Obj(), pod: running(), now: testTime,
			want: want{Outcome: failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 5m0s`), Stopped: true},
		},
		"lost and cancelled": {
			run: run().Cancelled().Obj(), pod: running(), node: testNode(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: failed(v1.ReasonCancelled, `TaskRun "run" was cancelled%s`, stillRunning), Stopped: true},
		},
		"failed by the Pod GC once its node was gone": {
			run: withRetries(run().Obj(), 1), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				pod.Status.Phase = corev1.PodFailed
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
					Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}}
				return pod
			}(),
			want: want{Attempts: 1},
		},
		"failed by the Pod GC on a node out of service, no retries: the node says why": {
			run: run().Obj(), node: testNode(corev1.ConditionUnknown, silentSince, outOfServiceTaint), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				pod.Status.Phase = corev1.PodFailed
				return pod
			}(),
			want: want{Outcome: failed(v1.ReasonPodFailed, `Pod "run-pod" was lost with its node "n": the node is tainted node.kubernetes.io/out-of-service`)},
		},
		"a step failed before its node went: the step's failure": {
			run: run().Obj(), node: testNode(corev1.ConditionUnknown, silentSince), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				return withStatus(pod, wrappers.PodStatus(pod).At(start).StepFailed(1, 3).Obj())
			}(),
			want: want{Outcome: failed(v1.ReasonStepFailed, `step "b" exited with code 3`)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Status.StartTime = &metav1.Time{Time: start}
			tc.run.Status.PodName = "run-pod"
			objs := []client.Object{tc.pod}
			if tc.node != nil {
				objs = append(objs, tc.node)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
			r := &TaskRunReconciler{Client: c, APIReader: c, DefaultTimeout: time.Hour, NodeLostTimeout: time.Minute,
				now: func() time.Time { return tc.now }}
			s := r.newRunScope(tc.run)
			if err := r.findPod(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if err := r.endOrRetry(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(tc.pod), pod); err != nil {
				t.Fatal(err)
			}
			got := want{Outcome: s.outcome, Attempts: len(s.run.Status.Attempts), WaitsForFence: s.waitsForFence,
				Stopped: pod.Spec.ActiveDeadlineSeconds != nil}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got.Attempts > 0 {
				if a := s.run.Status.Attempts[0]; a.Reason != string(v1.ReasonPodFailed) || a.PodName != "run-pod" {
					t.Errorf("recorded attempt %+v, want run-pod's PodFailed", a)
				}
			}
		})
	}
}

// TestProgressOnANodeNotReady checks that a run going on says that its
// Pod's node is not ready, and asks to be looked at when it will be lost.
func TestProgressOnANodeNotReady(t *testing.T) {
	pod := threeStepPod()
	pod.Spec.NodeName = "n"
	pod = withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(1).Obj())
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod, testNode(corev1.ConditionUnknown, testTime.Add(-20*time.Second))).Build()
	r := &TaskRunReconciler{Client: c, APIReader: c, DefaultTimeout: time.Hour, NodeLostTimeout: time.Minute,
		now: func() time.Time { return testTime }}
	run := withPodName(withStart(wrappers.TaskRun("ns", "run", "t").Obj(), testTime.Add(-time.Minute)), "run-pod")
	s := r.newRunScope(run)
	if err := r.runStages(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	want := unknown(v1.ReasonRunning, `running step "b" (2 of 3); node "n": the node is not ready `+
		"(Ready is Unknown since 2026-01-01T11:59:40Z: NodeStatusUnknown: Kubelet stopped posting node status.)")
	if diff := cmp.Diff(want, s.outcome, cmp.AllowUnexported(outcome{})); diff != "" {
		t.Errorf("outcome mismatch (-want +got):\n%s", diff)
	}
	if got := s.requeueAfter(); got != 40*time.Second {
		t.Errorf("requeueAfter() = %s, want 40s, when the node will have been not ready for a minute", got)
	}
}

func TestTrimNode(t *testing.T) {
	node := testNode(corev1.ConditionUnknown, testTime, outOfServiceTaint,
		corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	node.UID, node.ResourceVersion, node.Labels = "uid", "42", map[string]string{"kubernetes.io/hostname": "n"}
	node.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(testTime)
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse})
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"alpine:3"}, SizeBytes: 1 << 20}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	trimmed, err := trimNode(node.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "uid", ResourceVersion: "42"},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{outOfServiceTaint}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(testTime)}}},
	}
	if diff := cmp.Diff(want, trimmed); diff != "" {
		t.Errorf("trimNode() mismatch (-want +got):\n%s", diff)
	}
	// What the controller judges is what it would judge of the whole Node.
	if diff := cmp.Diff(nodefault.Read("n", node), nodefault.Read("n", trimmed.(*corev1.Node))); diff != "" {
		t.Errorf("the trimmed Node reads otherwise than the Node (-whole +trimmed):\n%s", diff)
	}
	if other, _ := trimNode("not a node"); other != "not a node" {
		t.Errorf("trimNode() changed what is not a Node: %v", other)
	}
}

func TestNodeHealthChanged(t *testing.T) {
	ready := testNode(corev1.ConditionTrue, testTime)
	heartbeat := ready.DeepCopy()
	heartbeat.ResourceVersion = "2"
	heartbeat.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(testTime.Add(time.Minute))
	heartbeat.Status.Images = []corev1.ContainerImage{{Names: []string{"alpine:3"}}}
	tests := map[string]struct {
		event func() bool
		want  bool
	}{
		"created": {func() bool { return nodeHealthChanged.Create(event.CreateEvent{Object: ready}) }, false},
		"a heartbeat": {func() bool {
			return nodeHealthChanged.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: heartbeat})
		}, false},
		"not ready": {func() bool {
			return nodeHealthChanged.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: testNode(corev1.ConditionUnknown, testTime.Add(time.Minute))})
		}, true},
		"tainted out of service": {func() bool {
			return nodeHealthChanged.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: testNode(corev1.ConditionTrue, testTime, outOfServiceTaint)})
		}, true},
		"deleted": {func() bool { return nodeHealthChanged.Delete(event.DeleteEvent{Object: ready}) }, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.event(); got != tc.want {
				t.Errorf("nodeHealthChanged = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestRunsOnNode(t *testing.T) {
	pod := func(ns, name, node string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return p
	}
	runOwner := func(name string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: v1.GroupVersion.String(), Kind: "TaskRun", Name: name, UID: "u", Controller: ptr.To(true)}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithIndex(&corev1.Pod{}, podNodeIndex, func(obj client.Object) []string { return []string{obj.(*corev1.Pod).Spec.NodeName} }).
		WithObjects(
			pod("a", "build-pod", "n", runOwner("build")),
			pod("b", "test-pod-retry1", "n", runOwner("test")),
			pod("a", "elsewhere-pod", "m", runOwner("elsewhere")),
			pod("a", "job-pod", "n", &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: "u", Controller: ptr.To(true)}),
			pod("a", "bare", "n", nil),
		).Build()
	got := runsOnNode(c)(context.Background(), testNode(corev1.ConditionUnknown, testTime))
	want := []reconcile.Request{
		{NamespacedName: client.ObjectKey{Namespace: "a", Name: "build"}},
		{NamespacedName: client.ObjectKey{Namespace: "b", Name: "test"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runsOnNode() mismatch (-want +got):\n%s", diff)
	}
}

// withRetries returns run with spec.retries set, retrying PodFailed (the default).
func withRetries(run *v1.TaskRun, retries int32) *v1.TaskRun {
	run.Spec.Retries = ptr.To(retries)
	return run
}

func TestMarkStepsLost(t *testing.T) {
	started := metav1.NewTime(testTime)
	steps := []v1.StepState{
		{Name: "a", State: v1.StepTerminated, Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &started, FinishedAt: &started},
		{Name: "b", State: v1.StepRunning, StartedAt: &started},
		{Name: "c", State: v1.StepWaiting, Reason: "PodInitializing"},
	}
	markStepsLost(steps)
	want := []v1.StepState{
		{Name: "a", State: v1.StepTerminated, Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &started, FinishedAt: &started},
		{Name: "b", State: v1.StepTerminated, Reason: "NodeLost", StartedAt: &started},
		{Name: "c", State: v1.StepTerminated, Reason: "NodeLost"},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("markStepsLost() mismatch (-want +got):\n%s", diff)
	}
}
