package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// This file reads what a run's Pod needs to know of its namespace: whether it
// enforces the restricted Pod Security level.
//
// It reads the namespace from the API server once per Pod creation, and
// only its metadata. A cache of namespaces would need list and watch on every
// namespace of the cluster, and would hold them all in the manager's memory
// for a label read once per run; a run's Pod is built once, so a namespace
// whose label changes later changes no Pod that exists, only the next ones.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// causeNamespaceUnread is the cause a run waits for when its namespace's
// labels could not be read, as the Pending condition's message gives it.
const causeNamespaceUnread = "its Namespace's Pod Security level could not be read"

// namespaceRestricted reads from the API server whether namespace enforces
// the restricted Pod Security level.
func (r *TaskRunReconciler) namespaceRestricted(ctx context.Context, namespace string) (bool, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("reading the labels of Namespace %s: %w", namespace, err)
	}
	return enforcesRestricted(ns.Labels), nil
}
