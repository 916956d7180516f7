// Package storagemigration rewrites minitask objects that are still stored in
// an older API version, then drops that version from the CRD's
// status.storedVersions, so that a later release can stop serving it. After an
// upgrade from the first release, objects written back then stay stored as
// v1alpha1 until something rewrites them; the manager does that itself.
package storagemigration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// CRDs are the CustomResourceDefinitions the manager migrates.
var CRDs = []string{"tasks.minitask.dev", "taskruns.minitask.dev"}

// maxPageSize bounds each LIST so that a large namespace never loads at once.
const maxPageSize = 500

// concurrentRewrites is how many objects of a page are rewritten at once.
const concurrentRewrites = 8

// noOpPatch changes nothing, yet makes the API server re-encode the object in
// the storage version and write it back (the bytes in etcd differ).
var noOpPatch = client.RawPatch(types.MergePatchType, []byte("{}"))

// The RBAC the migration needs, scoped to our two CRDs by name.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=tasks.minitask.dev;taskruns.minitask.dev
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=update,resourceNames=tasks.minitask.dev;taskruns.minitask.dev
// +kubebuilder:rbac:groups=minitask.dev,resources=tasks;taskruns,verbs=list;patch

var (
	migratedObjects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_storage_migration_objects_total",
		Help: "Objects rewritten in the storage version by the built-in storage migration.",
	}, []string{"crd"})
	migrationDone = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "minitask_storage_migration_complete",
		Help: "1 once the CRD's status.storedVersions lists only the storage version.",
	}, []string{"crd"})
)

func init() {
	metrics.Registry.MustRegister(migratedObjects, migrationDone)
}

// Migrator is a manager Runnable that migrates the CRDs once, while the
// manager is leader, retrying with backoff until it succeeds or stops.
type Migrator struct {
	// Reader reads uncached: CRD access is granted by name only, which
	// allows no LIST or WATCH, so the manager's cache cannot serve it.
	Reader client.Reader
	// Writer patches objects and updates CRD status.
	Writer client.Client
	// CRDs to migrate; defaults to CRDs.
	CRDs []string
}

// NeedLeaderElection makes the migration run on the leader only.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start migrates every CRD, retrying failures (e.g. the conversion webhook not
// serving yet) with backoff. It never fails the manager.
func (m *Migrator) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("storage-migration")
	crds := m.CRDs
	if len(crds) == 0 {
		crds = CRDs
	}
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: time.Minute}
	for _, name := range crds {
		err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
			n, err := m.MigrateCRD(ctx, name)
			if err != nil {
				log.Error(err, "storage migration failed; retrying", "crd", name)
				return false, nil
			}
			log.Info("storage migration complete", "crd", name, "rewritten", n)
			return true, nil
		})
		if err != nil {
			return nil //nolint:nilerr // only ends when ctx is done: the manager is stopping.
		}
	}
	return nil
}

// MigrateCRD rewrites every object of the named CRD when its storedVersions
// lists anything but the storage version, then sets storedVersions to the
// storage version alone. It is idempotent and safe to interrupt: a rerun
// starts over and rewrites again. It returns how many objects it rewrote.
func (m *Migrator) MigrateCRD(ctx context.Context, name string) (int, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Reader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return 0, fmt.Errorf("getting CRD %s: %w", name, err)
	}
	storage, err := storageVersion(crd)
	if err != nil {
		return 0, err
	}
	if slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		migrationDone.WithLabelValues(name).Set(1)
		return 0, nil
	}
	n, err := m.rewriteAll(ctx, crd, storage)
	if err != nil {
		return n, err
	}
	// The resourceVersion read above is the optimistic lock: if the CRD
	// changed meanwhile (e.g. another storage version), this fails and the
	// next attempt starts over.
	crd.Status.StoredVersions = []string{storage}
	if err := m.Writer.Status().Update(ctx, crd); err != nil {
		return n, fmt.Errorf("setting storedVersions of %s to [%s]: %w", name, storage, err)
	}
	migrationDone.WithLabelValues(name).Set(1)
	return n, nil
}

func (m *Migrator) rewriteAll(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (int, error) {
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: storage}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gv.WithKind(crd.Spec.Names.ListKind))
	var rewritten atomic.Int64
	for {
		if err := m.Reader.List(ctx, list, client.Limit(maxPageSize), client.Continue(list.Continue)); err != nil {
			return int(rewritten.Load()), fmt.Errorf("listing %s: %w", crd.Name, err)
		}
		// Each rewrite waits on the API server, the conversion webhook and
		// etcd in turn; a few at once keep them all busy (10,000 objects:
		// 105 s one at a time, see docs/benchmarks.md). API priority and
		// fairness keeps the API server responsive to everyone else.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(concurrentRewrites)
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(gv.WithKind(crd.Spec.Names.Kind))
			g.Go(func() error {
				err := m.Writer.Patch(gctx, obj, noOpPatch)
				// Deleted meanwhile, or rewritten by someone else: done either way.
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					return fmt.Errorf("rewriting %s %s/%s: %w", crd.Spec.Names.Kind, obj.Namespace, obj.Name, err)
				}
				rewritten.Add(1)
				migratedObjects.WithLabelValues(crd.Name).Inc()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return int(rewritten.Load()), err
		}
		if list.Continue == "" {
			return int(rewritten.Load()), nil
		}
	}
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", errors.New("CRD " + crd.Name + " has no storage version")
}
