package storagemigration

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/perobject"
)

// maxPageSize bounds each LIST so that a large namespace never loads at once.
const maxPageSize = 500

// concurrentRewrites is how many objects are rewritten at once.
const concurrentRewrites = 8

// noOpPatch changes nothing, yet makes the API server re-encode the object in
// the storage version and write it back (the bytes in etcd differ).
var noOpPatch = client.RawPatch(types.MergePatchType, []byte("{}"))

// rewriteAll rewrites every object of the CRD in the storage version, page by
// page. An object that cannot be rewritten is recorded in the failures, and
// the others go on; only a LIST that fails, or a rewrite that the API server
// could not serve at all (see unservable), ends the pass early, with an error.
func (m *Migrator) rewriteAll(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (int, perobject.Failures, error) {
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: storage}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gv.WithKind(crd.Spec.Names.ListKind))
	r := newRewriter(m.Writer, crd, gv.WithKind(crd.Spec.Names.Kind))
	for {
		if err := m.Reader.List(ctx, list, client.Limit(maxPageSize), client.Continue(list.Continue)); err != nil {
			n, failed := r.result()
			return n, failed, fmt.Errorf("listing %s: %w", crd.Name, err)
		}
		keys := make([]types.NamespacedName, len(list.Items))
		for i := range list.Items {
			keys[i] = types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}
		}
		if err := r.rewrite(ctx, keys); err != nil {
			n, failed := r.result()
			return n, failed, err
		}
		if list.Continue == "" {
			n, failed := r.result()
			return n, failed, nil
		}
	}
}

// rewriteKeys rewrites the named objects of the CRD in the storage version:
// those an earlier pass could not.
func (m *Migrator) rewriteKeys(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string, keys []types.NamespacedName) (int, perobject.Failures, error) {
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.Kind}
	r := newRewriter(m.Writer, crd, gvk)
	err := r.rewrite(ctx, keys)
	n, failed := r.result()
	return n, failed, err
}

// rewriter rewrites objects of one kind, a few at once, and tallies what it
// rewrote and what failed.
type rewriter struct {
	writer client.Client
	crd    *apiextensionsv1.CustomResourceDefinition
	gvk    schema.GroupVersionKind

	mu        sync.Mutex
	rewritten int
	failed    perobject.Failures
}

func newRewriter(w client.Client, crd *apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind) *rewriter {
	return &rewriter{writer: w, crd: crd, gvk: gvk, failed: perobject.Failures{}}
}

// rewrite rewrites the objects named by keys and returns when all are done,
// or at the first that the API server could not serve at all.
// Each rewrite waits on the API server, the conversion webhook and etcd in
// turn; a few at once keep them all busy (10,000 objects: 105 s one at a
// time, see docs/benchmarks.md). API priority and fairness keeps the API
// server responsive to everyone else.
func (r *rewriter) rewrite(ctx context.Context, keys []types.NamespacedName) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrentRewrites)
	for _, key := range keys {
		g.Go(func() error { return r.rewriteOne(ctx, key) })
	}
	return g.Wait()
}

// rewriteOne rewrites one object. An object refused (by admission, say) is
// recorded in the failures, and the error is nil, so that the others go on.
func (r *rewriter) rewriteOne(ctx context.Context, key types.NamespacedName) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(r.gvk)
	obj.Namespace, obj.Name = key.Namespace, key.Name
	err := r.writer.Patch(ctx, obj, noOpPatch)
	if err != nil && perobject.Unservable(err) {
		return fmt.Errorf("rewriting %s %s: %w", r.gvk.Kind, key, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	// Deleted meanwhile, or rewritten by someone else: done either way.
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		r.rewritten++
		migratedObjects.WithLabelValues(r.crd.Name).Inc()
	default:
		r.failed[key] = fmt.Errorf("rewriting %s %s: %w", r.gvk.Kind, key, err)
	}
	return nil
}

// result returns how many objects were rewritten and which failed.
func (r *rewriter) result() (int, perobject.Failures) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rewritten, r.failed
}
