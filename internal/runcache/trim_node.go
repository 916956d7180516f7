package runcache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrimNode keeps of a cached Node only what judges the Pods on it
// (nodefault.Read): its name and identity, its out-of-service taint, and its
// Ready condition's status, reason, message and time. A Node is mostly what
// no run needs (the images it holds, its addresses, capacity, labels and
// other conditions, several KiB to tens of KiB each), and the cache holds
// every Node of the cluster, for the controller must learn of any node's
// fault: trimmed, a Node is a few hundred bytes. The controller never writes
// a Node, so what is trimmed here is never written back.
func TrimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Node{
		TypeMeta: node.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              node.Name,
			UID:               node.UID,
			ResourceVersion:   node.ResourceVersion,
			CreationTimestamp: node.CreationTimestamp,
			DeletionTimestamp: node.DeletionTimestamp,
		},
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeOutOfService {
			trimmed.Spec.Taints = append(trimmed.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			trimmed.Status.Conditions = append(trimmed.Status.Conditions, corev1.NodeCondition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime,
			})
		}
	}
	return trimmed, nil
}
