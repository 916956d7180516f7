package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The kinds of volume source that -w NAME=SOURCE takes. describe writes a
// binding back in the same words, so what it shows can be typed again.
const (
	sourceEmptyDir  = "emptyDir"
	sourcePVC       = "pvc"
	sourceConfigMap = "configmap"
	sourceSecret    = "secret"
)

// workspaceFlagHelp is how -w is spelled, for help and errors alike.
const workspaceFlagHelp = "NAME=emptyDir, NAME=pvc:CLAIM, NAME=configmap:NAME or NAME=secret:NAME"

// parseWorkspaces reads the values of -w flags, each NAME=SOURCE, in order.
func parseWorkspaces(cmd *cobra.Command, flags []string) ([]v1beta1.WorkspaceBinding, error) {
	bindings := make([]v1beta1.WorkspaceBinding, 0, len(flags))
	seen := map[string]bool{}
	for _, f := range flags {
		b, err := parseWorkspace(f)
		if err != nil {
			return nil, usageErrorf(cmd, "malformed -w %q: %v", f, err)
		}
		if seen[b.Name] {
			return nil, usageErrorf(cmd, "-w %s is given twice; bind each workspace once", b.Name)
		}
		seen[b.Name] = true
		bindings = append(bindings, b)
	}
	return bindings, nil
}

// parseWorkspace reads one NAME=SOURCE. The kind of source is matched
// without regard to case (emptydir, PVC, configMap), the names exactly.
func parseWorkspace(flag string) (v1beta1.WorkspaceBinding, error) {
	name, source, ok := strings.Cut(flag, "=")
	if !ok || name == "" || source == "" {
		return v1beta1.WorkspaceBinding{}, fmt.Errorf("it needs %s, e.g. -w source=pvc:my-claim", workspaceFlagHelp)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return v1beta1.WorkspaceBinding{}, fmt.Errorf("workspace name %q: %s", name, strings.Join(errs, "; "))
	}
	b := v1beta1.WorkspaceBinding{Name: name}
	kind, ref, hasRef := strings.Cut(source, ":")
	switch strings.ToLower(kind) {
	case strings.ToLower(sourceEmptyDir):
		if hasRef {
			return v1beta1.WorkspaceBinding{}, fmt.Errorf("emptyDir takes no name, as in -w %s=emptyDir", name)
		}
		b.EmptyDir = &corev1.EmptyDirVolumeSource{}
		return b, nil
	case sourcePVC, sourceConfigMap, sourceSecret:
	default:
		return v1beta1.WorkspaceBinding{}, fmt.Errorf("unknown source %q; it is one of emptyDir, pvc:CLAIM, configmap:NAME and secret:NAME", kind)
	}
	if ref == "" {
		return v1beta1.WorkspaceBinding{}, fmt.Errorf("%s needs a name, as in -w %s=%s:NAME", kind, name, strings.ToLower(kind))
	}
	if errs := validation.IsDNS1123Subdomain(ref); len(errs) > 0 {
		return v1beta1.WorkspaceBinding{}, fmt.Errorf("%s name %q: %s", kind, ref, strings.Join(errs, "; "))
	}
	switch strings.ToLower(kind) {
	case sourcePVC:
		b.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: ref}
	case sourceConfigMap:
		b.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ref}}
	case sourceSecret:
		b.Secret = &corev1.SecretVolumeSource{SecretName: ref}
	}
	return b, nil
}

// checkWorkspaces refuses bindings of workspaces the Task does not declare:
// the controller would ignore them, and the workspace meant (a typo's) would
// silently be an emptyDir.
func checkWorkspaces(cmd *cobra.Command, task *v1beta1.Task, bindings []v1beta1.WorkspaceBinding) error {
	declared := map[string]bool{}
	for _, w := range task.Spec.Workspaces {
		declared[w.Name] = true
	}
	for _, b := range bindings {
		if !declared[b.Name] {
			return usageErrorf(cmd, "Task %q has no workspace %q; %s", task.Name, b.Name, declaredWorkspaces(task))
		}
	}
	return nil
}

// declaredWorkspaces says which workspaces a Task declares, for messages.
func declaredWorkspaces(task *v1beta1.Task) string {
	if len(task.Spec.Workspaces) == 0 {
		return "it declares no workspaces"
	}
	names := make([]string, len(task.Spec.Workspaces))
	for i, w := range task.Spec.Workspaces {
		names[i] = w.Name
	}
	return "its workspaces are: " + strings.Join(names, ", ")
}

// workspaceSource says what a binding mounts, in -w's words (pvc:cache),
// adding what -w cannot say but a manifest can (read-only, medium, ...).
func workspaceSource(b v1beta1.WorkspaceBinding) string {
	var text string
	var notes []string
	switch {
	case b.EmptyDir != nil:
		text = sourceEmptyDir
		if b.EmptyDir.Medium != "" {
			notes = append(notes, "medium "+string(b.EmptyDir.Medium))
		}
		if b.EmptyDir.SizeLimit != nil {
			notes = append(notes, "sizeLimit "+b.EmptyDir.SizeLimit.String())
		}
	case b.PersistentVolumeClaim != nil:
		text = sourcePVC + ":" + b.PersistentVolumeClaim.ClaimName
		if b.PersistentVolumeClaim.ReadOnly {
			notes = append(notes, "read-only")
		}
	case b.ConfigMap != nil:
		text = sourceConfigMap + ":" + b.ConfigMap.Name
		notes = append(notes, projectionNotes(len(b.ConfigMap.Items), b.ConfigMap.Optional)...)
	case b.Secret != nil:
		text = sourceSecret + ":" + b.Secret.SecretName
		notes = append(notes, projectionNotes(len(b.Secret.Items), b.Secret.Optional)...)
	default:
		// The CRD requires exactly one source; say so rather than guess.
		return "(no source)"
	}
	if len(notes) > 0 {
		text += " (" + strings.Join(notes, ", ") + ")"
	}
	return text
}

// projectionNotes says what a ConfigMap or Secret binding changes from
// mounting every key.
func projectionNotes(items int, optional *bool) []string {
	var notes []string
	if items > 0 {
		notes = append(notes, fmt.Sprintf("%d %s", items, plural(items, "key", "keys")))
	}
	if optional != nil && *optional {
		notes = append(notes, "optional")
	}
	return notes
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
