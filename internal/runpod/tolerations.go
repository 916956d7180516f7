package runpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// nodeLostTaints are the taints the node lifecycle controller puts on a node
// that is not ready (node.kubernetes.io/not-ready: its kubelet says so) or
// unreachable (node.kubernetes.io/unreachable: its kubelet went silent),
// whose NoExecute effect the taint manager acts on by evicting the node's
// Pods once their tolerationSeconds have passed.
var nodeLostTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// applyNodeLostTolerations makes the Pod tolerate each of nodeLostTaints
// for seconds, so that the taint manager evicts it when the controller gives
// it up (--node-lost-timeout) rather than after the 300 s that the API
// server's DefaultTolerationSeconds admission would give it. A toleration of
// the run's podTemplate that already covers a taint's NoExecute effect (its
// key, or no key, with the NoExecute effect or none), as that admission
// plugin judges it, is the user's choice and is kept: none is added for that
// taint. nil seconds adds none.
func applyNodeLostTolerations(spec *corev1.PodSpec, seconds *int64) {
	if seconds == nil {
		return
	}
	for _, key := range nodeLostTaints {
		if toleratesNoExecute(spec.Tolerations, key) {
			continue
		}
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
			Key:               key,
			Operator:          corev1.TolerationOpExists,
			Effect:            corev1.TaintEffectNoExecute,
			TolerationSeconds: ptr.To(*seconds),
		})
	}
}

// toleratesNoExecute reports whether one of tolerations covers the
// NoExecute taint key.
func toleratesNoExecute(tolerations []corev1.Toleration, key string) bool {
	for _, t := range tolerations {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
