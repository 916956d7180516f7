package conversion

import (
	"context"
	"encoding/json"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// AnnotationConversionData is the annotation on a v1alpha1 object that holds,
// as JSON, the v1beta1 fields v1alpha1 cannot express, so that converting back
// to v1beta1 loses nothing.
const AnnotationConversionData = "minitask.dev/conversion-data"

// conversionData is the annotation's JSON. Its one key names the hub version
// whose fields it holds, so that a later hub can still read what an older one
// wrote; T mirrors that hub's own field paths (spec.params, ...).
type conversionData[T any] struct {
	V1beta1 T `json:"v1beta1,omitzero"`
}

// emptyConversionData is what conversionData marshals to when nothing is lost.
const emptyConversionData = "{}"

// stashLostFields records lost in meta's conversion annotation, or removes the
// annotation when lost is empty. lost must hold nil, not empty, slices, so
// that when nothing is lost it marshals to {}. meta's annotations map may be
// shared with the source object, so it is copied before it changes.
func stashLostFields[T any](ctx context.Context, meta *metav1.ObjectMeta, lost T) {
	data, err := json.Marshal(conversionData[T]{V1beta1: lost})
	if err != nil {
		// Our own types always marshal; should that ever change, the object
		// still converts, only without what v1alpha1 cannot hold.
		log.FromContext(ctx).Error(err, "Cannot record fields v1alpha1 cannot express",
			"namespace", meta.Namespace, "name", meta.Name)
		removeConversionAnnotation(meta)
		return
	}
	if string(data) == emptyConversionData {
		removeConversionAnnotation(meta)
		return
	}
	if value, ok := meta.Annotations[AnnotationConversionData]; ok && value == string(data) {
		return
	}
	annotations := make(map[string]string, len(meta.Annotations)+1)
	maps.Copy(annotations, meta.Annotations)
	annotations[AnnotationConversionData] = string(data)
	meta.Annotations = annotations
}

// restoreLostFields reads meta's conversion annotation into lost and removes
// the annotation. An annotation that does not parse is ignored: conversion
// must not fail, and the fields v1alpha1 expresses are converted regardless.
func restoreLostFields[T any](ctx context.Context, meta *metav1.ObjectMeta, lost *T) {
	value, ok := meta.Annotations[AnnotationConversionData]
	if !ok {
		return
	}
	removeConversionAnnotation(meta)
	var data conversionData[T]
	if err := json.Unmarshal([]byte(value), &data); err != nil {
		log.FromContext(ctx).V(1).Info("Ignoring unparsable conversion annotation",
			"namespace", meta.Namespace, "name", meta.Name,
			"annotation", AnnotationConversionData, "error", err.Error())
		return
	}
	*lost = data.V1beta1
}

// removeConversionAnnotation removes the conversion annotation from meta
// without touching the map meta may share with the source object.
func removeConversionAnnotation(meta *metav1.ObjectMeta) {
	if _, ok := meta.Annotations[AnnotationConversionData]; !ok {
		return
	}
	if len(meta.Annotations) == 1 {
		meta.Annotations = nil
		return
	}
	annotations := maps.Clone(meta.Annotations)
	delete(annotations, AnnotationConversionData)
	meta.Annotations = annotations
}

// nilIfEmpty returns nil for an empty slice, which JSON cannot tell from an
// absent one, so that an empty list is never stashed.
func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}
