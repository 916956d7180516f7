package runpod

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// This file fills in the security settings that a namespace enforcing the
// restricted Pod Security level requires, so that a run's Pod is admitted
// there, under what the Task and the run ask for: a step's own settings win,
// field by field. Elsewhere the Pod gets no security setting the Task or the
// run did not ask for. A setting the level forbids (a capability it does not
// allow, say) is the Task's choice: Pod Security refuses the Pod, and the run
// fails saying so (rundecision's Refused).

const (
	// labelPodSecurityEnforce is the namespace label that sets the Pod
	// Security level the API server enforces on the namespace's Pods.
	labelPodSecurityEnforce = "pod-security.kubernetes.io/enforce"
	// podSecurityRestricted is that label's value for the strictest level.
	podSecurityRestricted = "restricted"

	// restrictedUser is the user, group and fsGroup of a Pod in a restricted
	// namespace whose run names no user. The level refuses a Pod that may
	// run as root, and most images run as root unless told otherwise: the
	// kubelet would then refuse to start them (runAsNonRoot with a root
	// image). 65532 is the nonroot user of distroless images, an unprivileged
	// ID that no ordinary image gives a meaning of its own; the fsGroup makes
	// the workspaces' volumes writable to it.
	restrictedUser int64 = 65532
)

// EnforcesRestricted reports whether a namespace with labels enforces the
// restricted Pod Security level: Inputs.Restricted.
func EnforcesRestricted(labels map[string]string) bool {
	return labels[labelPodSecurityEnforce] == podSecurityRestricted
}

// applyRestricted fills in what the restricted level requires and spec
// leaves unset: every step container drops every capability, may not gain
// privileges and runs under the runtime's default seccomp profile, and the
// Pod runs as a non-root user: restrictedUser, when the run names none. A
// field the run's podTemplate.securityContext sets wins: a Pod-level
// seccompProfile, say, is not overridden in each container, and runAsNonRoot
// is not changed. A run that names its user (runAsUser) chose its group and
// fsGroup too, set or not. A field a step's securityContext sets (its own,
// or its stepTemplate's) wins over the container's defaults here, field by
// field: a step that sets capabilities has its own add and drop, not ALL
// dropped as well.
func applyRestricted(spec *corev1.PodSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	pod := spec.SecurityContext
	if pod.RunAsNonRoot == nil {
		pod.RunAsNonRoot = ptr.To(true)
	}
	if pod.RunAsUser == nil {
		pod.RunAsUser = ptr.To(restrictedUser)
		if pod.RunAsGroup == nil {
			pod.RunAsGroup = ptr.To(restrictedUser)
		}
		if pod.FSGroup == nil {
			pod.FSGroup = ptr.To(restrictedUser)
		}
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			list[i].SecurityContext = restrictedStep(restrictedContainer(pod), list[i].SecurityContext)
		}
	}
}

// restrictedContainer returns the security context of a step container in a
// restricted namespace, for a Pod whose own security context is pod.
func restrictedContainer(pod *corev1.PodSecurityContext) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if pod.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}

// restrictedStep merges own, a step container's security context, over
// restricted, the level's defaults. A step that asks to be privileged, or
// to add CAP_SYS_ADMIN, without saying whether it may gain privileges is
// not told it may not: the API server would refuse that pair as invalid,
// hiding what the step asked for, where Pod Security's refusal names it.
func restrictedStep(restricted, own *corev1.SecurityContext) *corev1.SecurityContext {
	merged := mergeSecurityContext(restricted, own)
	if own == nil || own.AllowPrivilegeEscalation != nil {
		return merged
	}
	escalates := own.Privileged != nil && *own.Privileged
	if own.Capabilities != nil && slices.Contains(own.Capabilities.Add, "CAP_SYS_ADMIN") {
		escalates = true
	}
	if escalates {
		merged.AllowPrivilegeEscalation = nil
	}
	return merged
}
