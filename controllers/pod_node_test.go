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
	"github.com/minitask-dev/minitask/internal/scheme"
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
