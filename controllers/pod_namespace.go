package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file reads what a run's Pod needs to know of its namespace: whether it
// enforces the restricted Pod Security level.
//
// It reads the namespace from the API server, only its metadata, and
// remembers for a while the namespaces that do not enforce the level
// (unrestrictedNamespaces), so that a batch of runs in one namespace reads it
// once, not once a run. A cache of every namespace would need list and watch
// on all of them and hold them all in memory, for one label; this needs get
// alone and holds a bounded number of names.
//
// Remembering only "not restricted" keeps every Pod right. A namespace that
// enforces the level is read at every Pod creation, so a run there never
// misses a label removed meanwhile. A namespace remembered as not restricted
// that has since come to enforce the level refuses the Pod built without the
// level's settings: that refusal, after a remembered answer, forgets it and
// retries the run, which reads the namespace anew and builds the Pod
// the level admits. A refusal after a fresh read ends the run, as before.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

const (
	// unrestrictedNamespacesTTL is how long a namespace found not to enforce
	// the restricted level is remembered. A Pod refused meanwhile because
	// the namespace has come to enforce it is retried, so the time bounds
	// how long a name is held, not how long an answer may be wrong.
	unrestrictedNamespacesTTL = time.Minute
	// unrestrictedNamespacesMax bounds how many namespaces are remembered;
	// the least recently used beyond it are read again.
	unrestrictedNamespacesMax = 4096
)

// unrestrictedNamespaces remembers the namespaces last read not to enforce
// the restricted Pod Security level. A nil one remembers nothing.
type unrestrictedNamespaces struct {
	names *utilcache.LRUExpireCache // namespace name to struct{}
}

// newUnrestrictedNamespaces returns an empty memory whose entries expire by
// now.
func newUnrestrictedNamespaces(now func() time.Time) *unrestrictedNamespaces {
	return &unrestrictedNamespaces{names: utilcache.NewLRUExpireCacheWithClock(unrestrictedNamespacesMax, clockFunc(now))}
}

// clockFunc adapts a function to the clock of utilcache.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func (u *unrestrictedNamespaces) remembered(namespace string) bool {
	if u == nil {
		return false
	}
	_, ok := u.names.Get(namespace)
	return ok
}

func (u *unrestrictedNamespaces) remember(namespace string) {
	if u != nil {
		u.names.Add(namespace, struct{}{}, unrestrictedNamespacesTTL)
	}
}

func (u *unrestrictedNamespaces) forget(namespace string) {
	if u != nil {
		u.names.Remove(namespace)
	}
}

// namespaceLevel is what createPod knows of a namespace's Pod Security level.
type namespaceLevel struct {
	// restricted says that the namespace enforces the restricted level.
	restricted bool
	// remembered says that the answer was not read now but remembered, so a
	// Pod Security refusal may mean that it is out of date.
	remembered bool
}

// read reports whether namespace enforces the restricted Pod Security
// level, from memory for one that did not when last read within
// unrestrictedNamespacesTTL, through reader (the API server) otherwise.
func (u *unrestrictedNamespaces) read(ctx context.Context, reader client.Reader, namespace string) (namespaceLevel, error) {
	if u.remembered(namespace) {
		return namespaceLevel{remembered: true}, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return namespaceLevel{}, fmt.Errorf("reading the labels of Namespace %s: %w", namespace, err)
	}
	restricted := runpod.EnforcesRestricted(ns.Labels)
	if !restricted {
		u.remember(namespace)
	}
	return namespaceLevel{restricted: restricted}, nil
}
