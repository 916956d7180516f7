package runcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/internal/nodefault"
)

// TestTrimNode checks that the cache's copy of a Node keeps what judges the
// Pods on it, and nothing else.
func TestTrimNode(t *testing.T) {
	outOfServiceTaint := corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{outOfServiceTaint, {Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(testTime)}}},
	}
	node.UID, node.ResourceVersion, node.Labels = "uid", "42", map[string]string{"kubernetes.io/hostname": "n"}
	node.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(testTime)
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse})
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"alpine:3"}, SizeBytes: 1 << 20}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	trimmed, err := TrimNode(node.DeepCopy())
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
		t.Errorf("TrimNode() mismatch (-want +got):\n%s", diff)
	}
	// What the controller judges is what it would judge of the whole Node.
	if diff := cmp.Diff(nodefault.Read("n", node), nodefault.Read("n", trimmed.(*corev1.Node))); diff != "" {
		t.Errorf("the trimmed Node reads otherwise than the Node (-whole +trimmed):\n%s", diff)
	}
	if other, _ := TrimNode("not a node"); other != "not a node" {
		t.Errorf("TrimNode() changed what is not a Node: %v", other)
	}
}
