package conversion

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The generators of the fields release 3 added to v1beta1. Each fills every
// field of its type now and then, nested core/v1 types included, and leaves
// each out (or empty, where that differs on the wire) as often, so that
// both the stash and its absence are exercised. Values keep to what the
// CRD's schema admits; quantities are made from numbers and so written in
// their canonical form, which is what JSON gives back (a quantity keeps its
// value through conversion, not its text: see TestQuantitiesKeepTheirValue).

// stepAdditions fills the v1beta1-only fields of step. A script step gets
// no command or args, which the CRD forbids beside a script.
func (g *objectGenerator) stepAdditions(step *v1beta1.Step) {
	if g.chance(0.4) {
		return // a step v1alpha1 expresses whole
	}
	if step.Script == "" {
		step.Command = g.stringList(3)
		step.Args = g.stringList(4)
	}
	if g.chance(0.5) {
		step.WorkingDir = pick(g, "/workspace/"+g.dnsLabel(), "$(workspaces.source.path)", "/"+g.text())
	}
	step.Env = list(g, 4, g.envVar, g.paramName)
	if g.chance(0.5) {
		step.EnvFrom = pick(g, []corev1.EnvFromSource{}, []corev1.EnvFromSource{g.envFromSource()},
			[]corev1.EnvFromSource{g.envFromSource(), g.envFromSource()})
	}
	step.ComputeResources = g.resources()
}

// stringList is nil, empty, or up to n texts.
func (g *objectGenerator) stringList(n int) []string {
	switch g.intn(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	items := make([]string, 1+g.intn(n))
	for i := range items {
		items[i] = g.text()
	}
	return items
}

func (g *objectGenerator) envVar(name string) corev1.EnvVar {
	v := corev1.EnvVar{Name: name}
	if g.chance(0.5) {
		v.Value = g.text()
		return v
	}
	source := &corev1.EnvVarSource{}
	switch g.intn(5) {
	case 0:
		source.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: g.localRef(), Key: g.dnsLabel(), Optional: g.optionalBool()}
	case 1:
		source.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: g.localRef(), Key: g.dnsLabel(), Optional: g.optionalBool()}
	case 2:
		source.FieldRef = &corev1.ObjectFieldSelector{APIVersion: pick(g, "", "v1"), FieldPath: pick(g, "metadata.name", "status.podIP", "metadata.labels['app']")}
	case 3:
		source.ResourceFieldRef = &corev1.ResourceFieldSelector{ContainerName: pick(g, "", g.dnsLabel()),
			Resource: pick(g, "limits.cpu", "requests.memory"), Divisor: g.quantity()}
	case 4:
		source.FileKeyRef = &corev1.FileKeySelector{VolumeName: g.dnsLabel(), Path: g.dnsLabel() + ".env", Key: g.paramName(), Optional: g.optionalBool()}
	}
	v.ValueFrom = source
	return v
}

func (g *objectGenerator) envFromSource() corev1.EnvFromSource {
	s := corev1.EnvFromSource{Prefix: pick(g, "", "APP_", g.text())}
	if g.chance(0.5) {
		s.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: g.localRef(), Optional: g.optionalBool()}
	} else {
		s.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: g.localRef(), Optional: g.optionalBool()}
	}
	return s
}

func (g *objectGenerator) localRef() corev1.LocalObjectReference {
	return corev1.LocalObjectReference{Name: pick(g, "", g.dnsLabel())}
}

func (g *objectGenerator) optionalBool() *bool {
	return pick(g, nil, ptr.To(false), ptr.To(true))
}

func (g *objectGenerator) optionalInt64() *int64 {
	return pick(g, nil, ptr.To[int64](0), ptr.To(g.r.Int64N(1<<40)))
}

// quantity is a canonical quantity: milli-units, binary or decimal.
func (g *objectGenerator) quantity() resource.Quantity {
	switch g.intn(3) {
	case 0:
		return *resource.NewMilliQuantity(g.r.Int64N(64_000), resource.DecimalSI)
	case 1:
		return *resource.NewQuantity(g.r.Int64N(64)<<(10*(1+g.intn(3))), resource.BinarySI)
	}
	return *resource.NewQuantity(g.r.Int64N(1_000_000), resource.DecimalSI)
}

func (g *objectGenerator) resourceList() corev1.ResourceList {
	switch g.intn(3) {
	case 0:
		return nil
	case 1:
		return corev1.ResourceList{}
	}
	l := corev1.ResourceList{}
	for _, name := range uniqueNames(1+g.intn(3), func() string {
		return pick(g, "cpu", "memory", "ephemeral-storage", "example.com/gpu")
	}) {
		l[corev1.ResourceName(name)] = g.quantity()
	}
	return l
}

// resources is nil, {} (which must survive as such), or limits, requests
// and claims.
func (g *objectGenerator) resources() *corev1.ResourceRequirements {
	switch g.intn(4) {
	case 0:
		return nil
	case 1:
		return &corev1.ResourceRequirements{}
	}
	return &corev1.ResourceRequirements{
		Limits:   g.resourceList(),
		Requests: g.resourceList(),
		Claims: list(g, 2, func(name string) corev1.ResourceClaim {
			return corev1.ResourceClaim{Name: name, Request: pick(g, "", g.dnsLabel())}
		}, g.dnsLabel),
	}
}

func (g *objectGenerator) workspaceDeclaration(name string) v1beta1.WorkspaceDeclaration {
	w := v1beta1.WorkspaceDeclaration{Name: name, Description: g.text(), ReadOnly: g.optionalBool()}
	if g.chance(0.5) {
		w.MountPath = "/" + pick(g, "", "workspace/", "mnt/"+g.dnsLabel()+"/") + g.dnsLabel()
	}
	return w
}

// workspaceBinding has exactly one source, as the CRD requires.
func (g *objectGenerator) workspaceBinding(name string) v1beta1.WorkspaceBinding {
	b := v1beta1.WorkspaceBinding{Name: name}
	switch g.intn(4) {
	case 0:
		b.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: pick(g, corev1.StorageMediumDefault, corev1.StorageMediumMemory)}
		if g.chance(0.5) {
			b.EmptyDir.SizeLimit = ptr.To(g.quantity())
		}
	case 1:
		b.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: g.dnsLabel(), ReadOnly: g.chance(0.5)}
	case 2:
		b.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: g.localRef(), Items: g.keyToPaths(),
			DefaultMode: g.fileMode(), Optional: g.optionalBool()}
	case 3:
		b.Secret = &corev1.SecretVolumeSource{SecretName: pick(g, "", g.dnsLabel()), Items: g.keyToPaths(),
			DefaultMode: g.fileMode(), Optional: g.optionalBool()}
	}
	return b
}

func (g *objectGenerator) keyToPaths() []corev1.KeyToPath {
	return list(g, 3, func(key string) corev1.KeyToPath {
		return corev1.KeyToPath{Key: key, Path: key + "/" + g.text(), Mode: g.fileMode()}
	}, g.dnsLabel)
}

func (g *objectGenerator) fileMode() *int32 {
	return pick(g, nil, ptr.To[int32](0o400), ptr.To[int32](0o644), ptr.To[int32](0))
}

// podTemplate is nil, {} (which must survive as such), or any of its fields.
func (g *objectGenerator) podTemplate() *v1beta1.PodTemplate {
	switch g.intn(4) {
	case 0:
		return nil
	case 1:
		return &v1beta1.PodTemplate{}
	}
	t := &v1beta1.PodTemplate{
		NodeSelector:      g.stringMap(),
		Tolerations:       g.tolerations(),
		ImagePullSecrets:  list(g, 3, func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }, g.dnsLabel),
		PriorityClassName: pick(g, "", g.dnsLabel()),
	}
	if g.chance(0.6) {
		t.Affinity = g.affinity()
	}
	if g.chance(0.6) {
		t.SecurityContext = g.podSecurityContext()
	}
	return t
}

func (g *objectGenerator) tolerations() []corev1.Toleration {
	if g.chance(0.3) {
		return pick(g, nil, []corev1.Toleration{})
	}
	tolerations := make([]corev1.Toleration, 1+g.intn(3))
	for i := range tolerations {
		t := corev1.Toleration{Key: pick(g, "", "example.com/"+g.dnsLabel()),
			Effect: pick(g, "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)}
		if g.chance(0.5) {
			t.Operator, t.Value = corev1.TolerationOpEqual, g.text()
		} else {
			t.Operator = pick(g, "", corev1.TolerationOpExists)
		}
		if t.Effect == corev1.TaintEffectNoExecute {
			t.TolerationSeconds = g.optionalInt64()
		}
		tolerations[i] = t
	}
	return tolerations
}

func (g *objectGenerator) affinity() *corev1.Affinity {
	a := &corev1.Affinity{}
	if g.chance(0.6) {
		a.NodeAffinity = &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: g.preferredNodeTerms(),
		}
		if g.chance(0.6) {
			a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{g.nodeSelectorTerm(), g.nodeSelectorTerm()}[:1+g.intn(2)],
			}
		}
	}
	if g.chance(0.5) {
		a.PodAffinity = &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  g.podAffinityTerms(),
			PreferredDuringSchedulingIgnoredDuringExecution: g.weightedPodAffinityTerms(),
		}
	}
	if g.chance(0.5) {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  g.podAffinityTerms(),
			PreferredDuringSchedulingIgnoredDuringExecution: g.weightedPodAffinityTerms(),
		}
	}
	return a
}

func (g *objectGenerator) nodeSelectorTerm() corev1.NodeSelectorTerm {
	requirement := func() corev1.NodeSelectorRequirement {
		r := corev1.NodeSelectorRequirement{Key: "example.com/" + g.dnsLabel(),
			Operator: pick(g, corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpGt)}
		if r.Operator != corev1.NodeSelectorOpExists {
			r.Values = []string{g.dnsLabel()}
		}
		return r
	}
	term := corev1.NodeSelectorTerm{}
	for range g.intn(3) {
		term.MatchExpressions = append(term.MatchExpressions, requirement())
	}
	if g.chance(0.3) {
		term.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{g.dnsLabel()}}}
	}
	return term
}

func (g *objectGenerator) preferredNodeTerms() []corev1.PreferredSchedulingTerm {
	if g.chance(0.4) {
		return nil
	}
	return []corev1.PreferredSchedulingTerm{{Weight: 1 + g.r.Int32N(100), Preference: g.nodeSelectorTerm()}}
}

func (g *objectGenerator) metaLabelSelector() *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.dnsLabel()}}
	if g.chance(0.5) {
		s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier",
			Operator: pick(g, metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn), Values: []string{g.dnsLabel()}}}
	}
	return s
}

func (g *objectGenerator) podAffinityTerm() corev1.PodAffinityTerm {
	term := corev1.PodAffinityTerm{TopologyKey: pick(g, "kubernetes.io/hostname", "topology.kubernetes.io/zone")}
	if g.chance(0.7) {
		term.LabelSelector = g.metaLabelSelector()
	}
	if g.chance(0.3) {
		term.NamespaceSelector = g.metaLabelSelector()
	}
	if g.chance(0.3) {
		term.Namespaces = []string{g.dnsLabel()}
	}
	if g.chance(0.3) {
		term.MatchLabelKeys = []string{"app"}
		term.MismatchLabelKeys = []string{"tier"}
	}
	return term
}

func (g *objectGenerator) podAffinityTerms() []corev1.PodAffinityTerm {
	if g.chance(0.4) {
		return nil
	}
	return []corev1.PodAffinityTerm{g.podAffinityTerm()}
}

func (g *objectGenerator) weightedPodAffinityTerms() []corev1.WeightedPodAffinityTerm {
	if g.chance(0.4) {
		return nil
	}
	return []corev1.WeightedPodAffinityTerm{{Weight: 1 + g.r.Int32N(100), PodAffinityTerm: g.podAffinityTerm()}}
}

func (g *objectGenerator) podSecurityContext() *corev1.PodSecurityContext {
	if g.chance(0.2) {
		return &corev1.PodSecurityContext{}
	}
	c := &corev1.PodSecurityContext{
		RunAsUser:          g.optionalInt64(),
		RunAsGroup:         g.optionalInt64(),
		RunAsNonRoot:       g.optionalBool(),
		FSGroup:            g.optionalInt64(),
		SupplementalGroups: pick(g, nil, []int64{}, []int64{1000, g.r.Int64N(1 << 31)}),
	}
	if g.chance(0.5) {
		c.SupplementalGroupsPolicy = ptr.To(pick(g, corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict))
		c.FSGroupChangePolicy = ptr.To(pick(g, corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch))
		c.SELinuxChangePolicy = ptr.To(pick(g, corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption))
	}
	if g.chance(0.5) {
		c.SeccompProfile = &corev1.SeccompProfile{Type: pick(g, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined)}
		if g.chance(0.3) {
			c.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("profiles/" + g.dnsLabel())}
		}
		c.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	}
	if g.chance(0.3) {
		c.SELinuxOptions = &corev1.SELinuxOptions{User: "system_u", Role: "object_r", Type: "container_t", Level: "s0:c123,c456"}
		c.WindowsOptions = &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser"), HostProcess: g.optionalBool()}
	}
	if g.chance(0.3) {
		c.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65535"}}
	}
	return c
}
