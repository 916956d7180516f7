package conversion

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The API server defaults an object by its version's schema when it decodes
// a request and when it reads the object from etcd, in the storage version,
// but not after a conversion webhook has converted it. Our schemas carry two
// defaults, both from core/v1's LocalObjectReference (+default=""): a run's
// workspace configMap.name and podTemplate.imagePullSecrets[].name. Go's
// types drop an empty name (omitempty), so a stored object read through
// another version lost it, while a write through that version, defaulted,
// had it: the CEL rule that TaskRun spec is immutable then refused a write
// that changed nothing (a label added through v1 to a run of a configMap
// workspace without a name). Conversion writes these names even when empty,
// as the API server's defaulting would, so that old and new objects agree.

// holdsDefaultedNames reports whether object holds a name the schemas
// default: a TaskRun (v1beta1, v1; v1alpha1 keeps them in its stash) with a
// configMap workspace or podTemplate imagePullSecrets, the only places a
// TaskRun has the types defaultedNameMarshalers write
// (TestDefaultedNamesAreWhereLooked). Only such a run is written with them:
// with marshalers, the codec looks up every value's type among them, a
// twentieth of encoding a run that has none.
func holdsDefaultedNames(object any) bool {
	switch object := object.(type) {
	case *v1.TaskRun:
		return podTemplateHasPullSecrets(sameShape[v1beta1.PodTemplate](object.Spec.PodTemplate)) ||
			hasConfigMapWorkspace(sameShapeSlice[v1beta1.WorkspaceBinding](object.Spec.Workspaces))
	case *v1beta1.TaskRun:
		return podTemplateHasPullSecrets(object.Spec.PodTemplate) || hasConfigMapWorkspace(object.Spec.Workspaces)
	}
	return false
}

func podTemplateHasPullSecrets(template *v1beta1.PodTemplate) bool {
	return template != nil && len(template.ImagePullSecrets) > 0
}

func hasConfigMapWorkspace(workspaces []v1beta1.WorkspaceBinding) bool {
	for i := range workspaces {
		if workspaces[i].ConfigMap != nil {
			return true
		}
	}
	return false
}

// defaultedNameMarshalers write what the schemas default.
var defaultedNameMarshalers = jsonv2.JoinMarshalers(
	jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, ref *corev1.LocalObjectReference) error {
		return jsonv2.MarshalEncode(enc, namedReference{Name: ref.Name})
	}),
	jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, src *corev1.ConfigMapVolumeSource) error {
		return jsonv2.MarshalEncode(enc, configMapSourceWithName{
			Name: src.Name, Items: src.Items, DefaultMode: src.DefaultMode, Optional: src.Optional, DefaultUser: src.DefaultUser,
		})
	}),
)

// namedReference is LocalObjectReference with its name always written.
type namedReference struct {
	Name string `json:"name"`
}

// configMapSourceWithName is ConfigMapVolumeSource with its name always
// written; TestConfigMapSourceWithNameHasEveryField holds it to core/v1's.
type configMapSourceWithName struct {
	Name        string             `json:"name"`
	Items       []corev1.KeyToPath `json:"items,omitempty"`
	DefaultMode *int32             `json:"defaultMode,omitempty"`
	Optional    *bool              `json:"optional,omitempty"`
	DefaultUser *int64             `json:"defaultUser,omitempty"`
}
