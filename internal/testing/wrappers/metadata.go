package wrappers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// metadata sets what every object has in its metadata, for each wrapper
// that embeds it; W is that wrapper, which every setter returns, so that
// calls chain.
type metadata[W any] struct {
	wrapper W
	meta    *metav1.ObjectMeta
}

// Meta replaces the object's metadata, name and namespace included.
func (m metadata[W]) Meta(meta metav1.ObjectMeta) W {
	*m.meta = meta
	return m.wrapper
}

// UID sets the object's UID, which owner references name.
func (m metadata[W]) UID(uid string) W {
	m.meta.UID = types.UID(uid)
	return m.wrapper
}

// Annotation sets one annotation.
func (m metadata[W]) Annotation(key, value string) W {
	metav1.SetMetaDataAnnotation(m.meta, key, value)
	return m.wrapper
}

// Annotations replaces the annotations.
func (m metadata[W]) Annotations(a map[string]string) W {
	m.meta.Annotations = a
	return m.wrapper
}
