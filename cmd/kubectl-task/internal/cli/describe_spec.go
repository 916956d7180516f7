package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
)

// This file holds the sections of describe that show what a run's Pod is
// made of: workspaces, Pod settings, and the steps' env and resources.

// workspaces shows the Task's workspaces, each with the source the run binds
// it to and where steps see it, then bindings the Task does not declare.
func (d *describer) workspaces(run *v1.TaskRun, task *v1.Task, taskNote string) {
	d.line("")
	d.line("Workspaces:")
	if task == nil && len(run.Spec.Workspaces) > 0 {
		d.line("  (%s: the run's own bindings only)", taskNote)
	}
	rows := runinfo.Workspaces(run, task)
	if len(rows) == 0 {
		d.line("  (none)")
		return
	}
	d.line("  NAME\tSOURCE\tMOUNT PATH\tFROM")
	for _, r := range rows {
		d.line("  %s\t%s\t%s\t%s", r.Name, r.Source, orNone(r.MountPath), r.From)
	}
}

// podSettings shows what the run sets on its Pod: the ServiceAccount, and a
// summary of spec.podTemplate (the run's YAML has the whole of it).
func (d *describer) podSettings(run *v1.TaskRun) {
	d.line("")
	d.line("Pod Settings:")
	sa := run.Spec.ServiceAccountName
	if sa == "" {
		sa = none + " (none named: the Pod gets no API token)"
	}
	d.line("  Service Account:\t%s", sa)
	t := run.Spec.PodTemplate
	if t == nil {
		return
	}
	if len(t.NodeSelector) > 0 {
		pairs := make([]string, 0, len(t.NodeSelector))
		for _, k := range slices.Sorted(maps.Keys(t.NodeSelector)) {
			pairs = append(pairs, k+"="+t.NodeSelector[k])
		}
		d.line("  Node Selector:\t%s", strings.Join(pairs, ", "))
	}
	if len(t.Tolerations) > 0 {
		d.line("  Tolerations:\t%d", len(t.Tolerations))
	}
	if t.Affinity != nil {
		d.line("  Affinity:\t%s", affinityKinds(t.Affinity))
	}
	if t.SecurityContext != nil {
		d.line("  Security Context:\t%s", securityContextSummary(t.SecurityContext))
	}
	if len(t.ImagePullSecrets) > 0 {
		names := make([]string, len(t.ImagePullSecrets))
		for i, s := range t.ImagePullSecrets {
			names[i] = s.Name
		}
		d.line("  Image Pull Secrets:\t%s", strings.Join(names, ", "))
	}
	if t.PriorityClassName != "" {
		d.line("  Priority Class:\t%s", t.PriorityClassName)
	}
}

// affinityKinds names the kinds of affinity set.
func affinityKinds(a *corev1.Affinity) string {
	var kinds []string
	if a.NodeAffinity != nil {
		kinds = append(kinds, "nodeAffinity")
	}
	if a.PodAffinity != nil {
		kinds = append(kinds, "podAffinity")
	}
	if a.PodAntiAffinity != nil {
		kinds = append(kinds, "podAntiAffinity")
	}
	if len(kinds) == 0 {
		return "(empty)"
	}
	return strings.Join(kinds, ", ")
}

// securityContextSummary shows the settings of a Pod security context that
// decide who the steps run as.
func securityContextSummary(sc *corev1.PodSecurityContext) string {
	var parts []string
	if sc.RunAsNonRoot != nil {
		parts = append(parts, fmt.Sprintf("runAsNonRoot=%t", *sc.RunAsNonRoot))
	}
	if sc.RunAsUser != nil {
		parts = append(parts, fmt.Sprintf("runAsUser=%d", *sc.RunAsUser))
	}
	if sc.RunAsGroup != nil {
		parts = append(parts, fmt.Sprintf("runAsGroup=%d", *sc.RunAsGroup))
	}
	if sc.FSGroup != nil {
		parts = append(parts, fmt.Sprintf("fsGroup=%d", *sc.FSGroup))
	}
	if sc.SeccompProfile != nil {
		parts = append(parts, "seccompProfile="+string(sc.SeccompProfile.Type))
	}
	if len(parts) == 0 {
		return "set (see the run's spec.podTemplate.securityContext)"
	}
	return strings.Join(parts, ", ")
}

// stepEnv shows each step's environment variables and where their values
// come from, then its envFrom sources. A literal value is shown as
// kubectl describe pod shows it; values from Secrets are never read.
func (d *describer) stepEnv(task *v1.Task, taskNote string) {
	d.line("")
	d.line("Step Env:")
	if task == nil {
		d.line("  (%s)", taskNote)
		return
	}
	var rows [][3]string
	for _, s := range task.Spec.Steps {
		for _, e := range s.Env {
			rows = append(rows, [3]string{s.Name, e.Name, envVarSource(e)})
		}
		for _, e := range s.EnvFrom {
			rows = append(rows, [3]string{s.Name, e.Prefix + "*", envFromSource(e)})
		}
	}
	if len(rows) == 0 {
		d.line("  (none)")
		return
	}
	d.line("  STEP\tNAME\tFROM")
	for _, r := range rows {
		d.line("  %s\t%s\t%s", r[0], r[1], r[2])
	}
}

// envVarSource says where an env var's value comes from: the value itself,
// or the Secret, ConfigMap or field it is read from.
func envVarSource(e corev1.EnvVar) string {
	from := e.ValueFrom
	switch {
	case from == nil:
		return "value: " + displayValue(e.Value)
	case from.SecretKeyRef != nil:
		return "secretKeyRef: " + from.SecretKeyRef.Name + "." + from.SecretKeyRef.Key + optionalNote(from.SecretKeyRef.Optional)
	case from.ConfigMapKeyRef != nil:
		return "configMapKeyRef: " + from.ConfigMapKeyRef.Name + "." + from.ConfigMapKeyRef.Key + optionalNote(from.ConfigMapKeyRef.Optional)
	case from.FieldRef != nil:
		return "fieldRef: " + from.FieldRef.FieldPath
	case from.ResourceFieldRef != nil:
		text := "resourceFieldRef: " + from.ResourceFieldRef.Resource
		if c := from.ResourceFieldRef.ContainerName; c != "" {
			text += " of " + c
		}
		return text
	case from.FileKeyRef != nil:
		return "fileKeyRef: " + from.FileKeyRef.VolumeName + "/" + from.FileKeyRef.Path + "." + from.FileKeyRef.Key + optionalNote(from.FileKeyRef.Optional)
	}
	return "valueFrom: (a source this plugin does not know)"
}

// envFromSource names the ConfigMap or Secret whose every key becomes a variable.
func envFromSource(e corev1.EnvFromSource) string {
	switch {
	case e.ConfigMapRef != nil:
		return "configMapRef: " + e.ConfigMapRef.Name + optionalNote(e.ConfigMapRef.Optional)
	case e.SecretRef != nil:
		return "secretRef: " + e.SecretRef.Name + optionalNote(e.SecretRef.Optional)
	}
	return "envFrom: (a source this plugin does not know)"
}

func optionalNote(optional *bool) string {
	if optional != nil && *optional {
		return " (optional)"
	}
	return ""
}

// stepResources shows the requests and limits of the steps that set any.
func (d *describer) stepResources(task *v1.Task, taskNote string) {
	d.line("")
	d.line("Step Resources:")
	if task == nil {
		d.line("  (%s)", taskNote)
		return
	}
	var rows [][3]string
	for _, s := range task.Spec.Steps {
		r := s.ComputeResources
		if r == nil || (len(r.Requests) == 0 && len(r.Limits) == 0) {
			continue
		}
		rows = append(rows, [3]string{s.Name, resourceList(r.Requests), resourceList(r.Limits)})
	}
	if len(rows) == 0 {
		d.line("  (none set)")
		return
	}
	d.line("  STEP\tREQUESTS\tLIMITS")
	for _, r := range rows {
		d.line("  %s\t%s\t%s", r[0], r[1], r[2])
	}
}

// resourceList shows requests or limits as cpu=500m, memory=1Gi.
func resourceList(l corev1.ResourceList) string {
	if len(l) == 0 {
		return none
	}
	parts := make([]string, 0, len(l))
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	return strings.Join(parts, ", ")
}
