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
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These test the controller's watch of Nodes: which Node changes reconcile
// a run, and which runs a Node's change reconciles.

func TestNodeHealthChanged(t *testing.T) {
	ready := wrappers.Node(corev1.ConditionTrue, testTime)
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
			return nodeHealthChanged.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: wrappers.Node(corev1.ConditionUnknown, testTime.Add(time.Minute))})
		}, true},
		"tainted out of service": {func() bool {
			return nodeHealthChanged.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: wrappers.Node(corev1.ConditionTrue, testTime, wrappers.OutOfServiceTaint)})
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
	got := runsOnNode(c)(context.Background(), wrappers.Node(corev1.ConditionUnknown, testTime))
	want := []reconcile.Request{
		{NamespacedName: client.ObjectKey{Namespace: "a", Name: "build"}},
		{NamespacedName: client.ObjectKey{Namespace: "b", Name: "test"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runsOnNode() mismatch (-want +got):\n%s", diff)
	}
}
