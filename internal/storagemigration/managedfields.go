package storagemigration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/perobject"
)

// Once a version is no longer served, no client can write through it again,
// but the managedFields entries that clients wrote through it stay: an
// object applied or updated through v1alpha1 keeps an entry naming
// minitask.dev/v1alpha1 for as long as it lives. While the version is still
// in the CRD (served: false) that is harmless. Once it is removed, the API
// server can no longer convert the object to it, and every server-side
// apply of the object fails, and other updates lose all its managedFields
// (kubernetes/kubernetes#111937). So the migration drops those entries once
// the version is unserved, before the version may be removed.
//
// Dropped, not re-pointed at the storage version: an entry lists field paths
// of its own version, and v1alpha1's are not v1beta1's (spec.taskRef is a
// string there, an object here; status.phase and status.finishTime do not
// exist in v1beta1). Re-pointing would need every path translated, or leave
// entries claiming fields v1beta1 does not have. Dropping is what the API
// server itself does with the entries of a built-in type's version it no
// longer knows (structured-merge-diff drops a manager whose version it
// cannot convert to). The cost: the managers of those entries no longer own
// those fields, so a later apply by the same manager, now through v1beta1,
// takes ownership again of what it applies but does not remove a field it
// stopped listing, and another applier changing such a field meets no
// conflict. Server-side apply and updates keep working, which is the point.

// staleEntries returns which of entries name a version of group that served
// does not mark as served, by version, and the others.
func staleEntries(entries []metav1.ManagedFieldsEntry, group string, served map[string]bool) (stale map[string]int, kept []metav1.ManagedFieldsEntry) {
	for _, e := range entries {
		gv, err := schema.ParseGroupVersion(e.APIVersion)
		if err == nil && gv.Group == group && !served[gv.Version] {
			if stale == nil {
				stale = map[string]int{}
			}
			stale[gv.Version]++
			continue
		}
		kept = append(kept, e)
	}
	return stale, kept
}

// servedVersions are the versions the CRD serves; its storage version counts
// as served whatever it says, so that its entries are never dropped.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) map[string]bool {
	served := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		served[v.Name] = v.Served || v.Storage
	}
	return served
}

// droppedEntries tallies what a pass over one CRD's objects dropped.
type droppedEntries struct {
	mu sync.Mutex
	// byVersion counts the entries dropped, by the version they named.
	byVersion map[string]int
	objects   int
	failed    perobject.Failures
}

// dropStaleManagedFields drops, from every object of the CRD, the
// managedFields entries that name a version the CRD does not serve. It lists
// the objects' metadata, page by page, and patches only the objects that
// hold such entries; it reports what it dropped (log, metric, Event). It
// returns how many objects it rewrote. Objects it could not rewrite do not
// stop the others: the error names them, and the next attempt lists again.
func (m *Migrator) dropStaleManagedFields(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (int, error) {
	storage, err := storageVersion(crd)
	if err != nil {
		return 0, err
	}
	served := servedVersions(crd)
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.Kind}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(crd.Spec.Names.ListKind))
	d := &droppedEntries{byVersion: map[string]int{}, failed: perobject.Failures{}}
	for {
		if err := m.Reader.List(ctx, list, client.Limit(maxPageSize), client.Continue(list.Continue)); err != nil {
			return d.objects, fmt.Errorf("listing %s: %w", crd.Name, err)
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(concurrentRewrites)
		for i := range list.Items {
			obj := &list.Items[i]
			if stale, _ := staleEntries(obj.ManagedFields, crd.Spec.Group, served); stale == nil {
				continue
			}
			obj.SetGroupVersionKind(gvk)
			g.Go(func() error { return m.dropEntries(gctx, obj, served, d) })
		}
		if err := g.Wait(); err != nil {
			return d.objects, err
		}
		if list.Continue == "" {
			break
		}
	}
	m.reportDropped(ctx, crd, d)
	if len(d.failed) > 0 {
		stale := &StaleManagedFieldsError{CRD: crd.Name, Failed: d.failed}
		if m.Recorder != nil {
			m.Recorder.Eventf(crd, nil, corev1.EventTypeWarning, ReasonManagedFieldsIncomplete, "Migrate", "%s",
				shorten(stale.Error()+"; retrying them with backoff"))
		}
		return d.objects, stale
	}
	return d.objects, nil
}

// dropEntries patches obj's managedFields to those that name a served
// version. The patch carries the resourceVersion read, so that entries
// written meanwhile are never lost: on a conflict, it reads the object again
// and starts over.
func (m *Migrator) dropEntries(ctx context.Context, obj *metav1.PartialObjectMetadata, served map[string]bool, d *droppedEntries) error {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	group := obj.GroupVersionKind().Group
	var dropped map[string]int
	attempt := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if attempt++; attempt > 1 {
			if err := m.Reader.Get(ctx, key, obj); err != nil {
				return err
			}
		}
		var kept []metav1.ManagedFieldsEntry
		dropped, kept = staleEntries(obj.ManagedFields, group, served)
		if dropped == nil {
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": obj.ResourceVersion, "managedFields": managedFieldsValue(kept),
		}})
		if err != nil {
			return err
		}
		return m.Writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
	})
	if err != nil && perobject.Unservable(err) {
		return fmt.Errorf("dropping managedFields entries of %s %s: %w", obj.Kind, key, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		d.failed[key] = fmt.Errorf("dropping managedFields entries of %s %s: %w", obj.Kind, key, err)
	case dropped != nil:
		d.objects++
		for v, n := range dropped {
			d.byVersion[v] += n
		}
	}
	return nil
}

// managedFieldsValue is what a patch sets managedFields to so that they
// become kept. The API server takes an empty list to mean a client that
// knows nothing of managedFields, and keeps them as they are; a list of one
// empty entry is how a client clears them.
func managedFieldsValue(kept []metav1.ManagedFieldsEntry) any {
	if len(kept) == 0 {
		return []metav1.ManagedFieldsEntry{{}}
	}
	return kept
}

// reportDropped says what a pass dropped: the log, the metric
// minitask_storage_migration_managed_fields_entries_dropped_total, and a
// Normal Event on the CRD, where an operator about to remove a version looks.
func (m *Migrator) reportDropped(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, d *droppedEntries) {
	if d.objects == 0 {
		return
	}
	var parts []string
	total := 0
	for _, v := range slices.Sorted(maps.Keys(d.byVersion)) {
		droppedManagedFields.WithLabelValues(crd.Name, v).Add(float64(d.byVersion[v]))
		parts = append(parts, fmt.Sprintf("%d naming %s/%s", d.byVersion[v], crd.Spec.Group, v))
		total += d.byVersion[v]
	}
	note := fmt.Sprintf("dropped %d managedFields %s (%s), of versions no longer served, from %d %s, "+
		"so that server-side apply and updates keep working once those versions are removed",
		total, plural(total, "entry", "entries"), strings.Join(parts, ", "), d.objects, plural(d.objects, "object", "objects"))
	logf.FromContext(ctx).WithName("storage-migration").Info(note, "crd", crd.Name, "entries", d.byVersion, "objects", d.objects)
	if m.Recorder != nil {
		m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonManagedFieldsDropped, "Migrate", "%s", shorten(note))
	}
}

// StaleManagedFieldsError says that some objects keep managedFields entries
// of versions the CRD no longer serves: they could not be rewritten.
type StaleManagedFieldsError struct {
	// CRD is the CRD's name.
	CRD string
	// Failed are the objects not rewritten, each with its error.
	Failed perobject.Failures
}

func (e *StaleManagedFieldsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s of %s keep managedFields entries of versions no longer served",
		len(e.Failed), plural(len(e.Failed), "object", "objects"), e.CRD)
	b.WriteString(e.Failed.Named())
	return b.String()
}
