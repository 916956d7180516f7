package runinfo

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// The kinds of volume source a workspace binding is written with, as
// NAME=SOURCE (start's -w, the dashboard's start form). WorkspaceSource
// writes a binding back in the same words, so what is shown can be typed
// again.
const (
	SourceEmptyDir  = "emptyDir"
	SourcePVC       = "pvc"
	SourceConfigMap = "configmap"
	SourceSecret    = "secret"
)

// WorkspaceSyntax is how a binding is spelled, for help and errors alike.
const WorkspaceSyntax = "NAME=emptyDir, NAME=pvc:CLAIM, NAME=configmap:NAME or NAME=secret:NAME"

// ParseWorkspace reads one NAME=SOURCE. The kind of source is matched
// without regard to case (emptydir, PVC, configMap), the names exactly.
func ParseWorkspace(text string) (v1.WorkspaceBinding, error) {
	name, source, ok := strings.Cut(text, "=")
	if !ok || name == "" || source == "" {
		return v1.WorkspaceBinding{}, fmt.Errorf("it needs %s, e.g. -w source=pvc:my-claim", WorkspaceSyntax)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return v1.WorkspaceBinding{}, fmt.Errorf("workspace name %q: %s", name, strings.Join(errs, "; "))
	}
	return ParseWorkspaceSource(name, source)
}

// ParseWorkspaceSource reads the SOURCE of a binding of workspace name.
func ParseWorkspaceSource(name, source string) (v1.WorkspaceBinding, error) {
	b := v1.WorkspaceBinding{Name: name}
	kind, ref, hasRef := strings.Cut(source, ":")
	switch strings.ToLower(kind) {
	case strings.ToLower(SourceEmptyDir):
		if hasRef {
			return v1.WorkspaceBinding{}, fmt.Errorf("emptyDir takes no name, as in -w %s=emptyDir", name)
		}
		b.EmptyDir = &corev1.EmptyDirVolumeSource{}
		return b, nil
	case SourcePVC, SourceConfigMap, SourceSecret:
	default:
		return v1.WorkspaceBinding{}, fmt.Errorf("unknown source %q; it is one of emptyDir, pvc:CLAIM, configmap:NAME and secret:NAME", kind)
	}
	if ref == "" {
		return v1.WorkspaceBinding{}, fmt.Errorf("%s needs a name, as in -w %s=%s:NAME", kind, name, strings.ToLower(kind))
	}
	if errs := validation.IsDNS1123Subdomain(ref); len(errs) > 0 {
		return v1.WorkspaceBinding{}, fmt.Errorf("%s name %q: %s", kind, ref, strings.Join(errs, "; "))
	}
	switch strings.ToLower(kind) {
	case SourcePVC:
		b.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: ref}
	case SourceConfigMap:
		b.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ref}}
	case SourceSecret:
		b.Secret = &corev1.SecretVolumeSource{SecretName: ref}
	}
	return b, nil
}

// WorkspaceSource says what a binding mounts, in -w's words (pvc:cache),
// adding what -w cannot say but a manifest can (read-only, medium, ...).
func WorkspaceSource(b v1.WorkspaceBinding) string {
	var text string
	var notes []string
	switch {
	case b.EmptyDir != nil:
		text = SourceEmptyDir
		if b.EmptyDir.Medium != "" {
			notes = append(notes, "medium "+string(b.EmptyDir.Medium))
		}
		if b.EmptyDir.SizeLimit != nil {
			notes = append(notes, "sizeLimit "+b.EmptyDir.SizeLimit.String())
		}
	case b.PersistentVolumeClaim != nil:
		text = SourcePVC + ":" + b.PersistentVolumeClaim.ClaimName
		if b.PersistentVolumeClaim.ReadOnly {
			notes = append(notes, "read-only")
		}
	case b.ConfigMap != nil:
		text = SourceConfigMap + ":" + b.ConfigMap.Name
		notes = append(notes, projectionNotes(len(b.ConfigMap.Items), b.ConfigMap.Optional)...)
	case b.Secret != nil:
		text = SourceSecret + ":" + b.Secret.SecretName
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
	switch {
	case items == 1:
		notes = append(notes, "1 key")
	case items > 1:
		notes = append(notes, fmt.Sprintf("%d keys", items))
	}
	if optional != nil && *optional {
		notes = append(notes, "optional")
	}
	return notes
}
