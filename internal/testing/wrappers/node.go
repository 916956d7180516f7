package wrappers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OutOfServiceTaint is the taint of a node shut down for good
// (node.kubernetes.io/out-of-service), which fences the Pods on it.
var OutOfServiceTaint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// Node returns the Node "n", its Ready condition of status since since, with
// the reason and message its kubelet (True) or the node lifecycle controller
// (otherwise) gives it, and taints.
func Node(status corev1.ConditionStatus, since time.Time, taints ...corev1.Taint) *corev1.Node {
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
