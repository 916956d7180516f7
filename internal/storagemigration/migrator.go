// Package storagemigration rewrites minitask objects that are still stored in
// another API version than the CRD's storage version, then trims the CRD's
// status.storedVersions to the storage version alone, so that a later
// release can stop serving the others. Objects stay stored in the version
// they were written in until something rewrites them, and the manager does
// that itself, whichever versions they are: v1alpha1 (the first release's)
// after the upgrade to release 2, v1beta1 and v1alpha1 after the upgrade to
// release 6, which stores v1. Once a version is no longer served, it also
// drops the managedFields entries that name it, so that the version can then
// be removed (managedfields.go).
//
// Where the cluster serves the platform's storage version migration
// (storagemigration.k8s.io/v1, GA in Kubernetes 1.37), the manager asks the
// platform instead, one StorageVersionMigration per CRD, follows it to its
// end and reports on it as on its own (platform.go); where it does not
// (Kubernetes 1.30 to 1.36), or the platform's migration fails, the manager
// rewrites the objects itself, as below.
//
// One object that cannot be rewritten (an admission policy denying its
// update, say) does not hold up the others: the migration rewrites the rest,
// says which ones failed (a metric, a Warning Event on the CRD, the log), and
// retries only those, with backoff, until they pass. storedVersions is
// trimmed only once every object is rewritten.
package storagemigration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/perobject"
)

// CRDs are the CustomResourceDefinitions the manager migrates.
var CRDs = []string{"tasks.minitask.dev", "taskruns.minitask.dev"}

// defaultBackoff paces the attempts of one CRD's migration: the first retry
// after a second, then twice as long each time, at most 5 minutes apart.
// Retries go on for as long as the manager leads, so that fixing what denied
// an object (a policy, say) completes the migration without a restart; each
// costs only the objects that failed.
var defaultBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 5 * time.Minute}

// The RBAC the migration needs, scoped to our two CRDs by name; Events on the
// CRDs say when objects cannot be rewritten. Objects are read again (get)
// when their managedFields changed while entries were being dropped.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=tasks.minitask.dev;taskruns.minitask.dev
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=update,resourceNames=tasks.minitask.dev;taskruns.minitask.dev
// +kubebuilder:rbac:groups=minitask.dev,resources=tasks;taskruns,verbs=get;list;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Migrator is a manager Runnable that migrates the CRDs once, while the
// manager is leader, retrying with backoff until it succeeds or stops.
type Migrator struct {
	// Reader reads uncached: CRD access is granted by name only, which
	// allows no LIST or WATCH, so the manager's cache cannot serve it.
	Reader client.Reader
	// Writer patches objects and updates CRD status.
	Writer client.Client
	// Recorder, if set, records Events on the CRDs: a Warning while objects
	// cannot be rewritten, and a Normal one once the migration completes
	// after that.
	Recorder events.EventRecorder
	// CRDs to migrate; defaults to CRDs.
	CRDs []string
	// Backoff paces the retries; zero means defaultBackoff.
	Backoff wait.Backoff
	// PlatformStartTimeout is how long a StorageVersionMigration may go
	// without a condition before the manager migrates itself; zero means
	// defaultPlatformStartTimeout.
	PlatformStartTimeout time.Duration
	// PlatformPoll is how often a StorageVersionMigration is read while it
	// runs; zero means defaultPlatformPoll.
	PlatformPoll time.Duration
	// ServesPlatform, if set, says whether the cluster serves the
	// platform's storage version migration, instead of discovery.
	ServesPlatform func() (bool, error)

	mu sync.Mutex
	// pending holds, by CRD name, what the last attempt could not rewrite.
	pending map[string]*pendingObjects
	// ownPath holds the CRDs that the manager migrates itself, since the
	// platform cannot (platform.go): for as long as it leads.
	ownPath map[string]bool
}

// NeedLeaderElection makes the migration run on the leader only.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start migrates every CRD, retrying failures (e.g. the conversion webhook not
// serving yet, or objects an admission policy will not let be rewritten) with
// backoff. The CRDs are migrated side by side, so that one that cannot finish
// does not hold up the other. It never fails the manager.
func (m *Migrator) Start(ctx context.Context) error {
	crds := m.CRDs
	if len(crds) == 0 {
		crds = CRDs
	}
	var wg sync.WaitGroup
	for _, name := range crds {
		wg.Go(func() { m.migrateUntilDone(ctx, name) })
	}
	wg.Wait()
	return nil
}

// migrateUntilDone migrates the CRD, retrying with backoff until it is done or
// ctx ends (the manager stops).
func (m *Migrator) migrateUntilDone(ctx context.Context, name string) {
	log := logf.FromContext(ctx).WithName("storage-migration").WithValues("crd", name)
	backoff := m.Backoff
	if backoff.Duration == 0 {
		backoff = defaultBackoff
	}
	// DelayFunc, unlike ExponentialBackoff, keeps retrying once the delay
	// reaches the cap (ExponentialBackoff stops there).
	_ = backoff.DelayFunc().Until(ctx, true, false, func(ctx context.Context) (bool, error) {
		n, err := m.Migrate(ctx, name)
		var incomplete *IncompleteError
		var stale *StaleManagedFieldsError
		switch {
		case errors.As(err, &incomplete):
			log.Error(err, "storage migration incomplete; retrying the objects that failed",
				"rewritten", n, "notRewritten", len(incomplete.Failed))
			return false, nil
		case errors.As(err, &stale):
			log.Error(err, "managedFields entries of versions no longer served left on some objects; retrying",
				"rewritten", n, "notRewritten", len(stale.Failed))
			return false, nil
		case err != nil:
			log.Error(err, "storage migration failed; retrying", "rewritten", n)
			return false, nil
		}
		log.Info("storage migration complete", "rewritten", n)
		return true, nil
	})
	// It only ends early when ctx is done: the manager is stopping.
}

// Migrate migrates the named CRD once: by the platform's storage version
// migrator where the cluster serves it (platform.go), following its
// migration to the end, else by MigrateCRD; then MigrateCRD drops the
// managedFields entries of versions no longer served, whichever path
// migrated. Once the platform's path fails for a CRD, the manager migrates
// that CRD itself on every later call. An error other than the platform's
// failure is returned as it is: the caller tries again.
func (m *Migrator) Migrate(ctx context.Context, name string) (int, error) {
	if !m.migratesItself(name) {
		err := m.migrateByPlatform(ctx, name)
		switch {
		case isPlatformUnavailable(err):
			m.setMigratesItself(name)
		case err != nil:
			return 0, err
		}
	}
	return m.MigrateCRD(ctx, name)
}

func (m *Migrator) migratesItself(crd string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ownPath[crd]
}

func (m *Migrator) setMigratesItself(crd string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ownPath == nil {
		m.ownPath = map[string]bool{}
	}
	m.ownPath[crd] = true
}

// MigrateCRD rewrites every object of the named CRD when its storedVersions
// lists anything but the storage version, then sets storedVersions to the
// storage version alone. Then it drops the managedFields entries that name a
// version the CRD no longer serves (managedfields.go), which takes one LIST
// of the objects' metadata. It is idempotent and safe to interrupt: a rerun
// starts over and rewrites again. It returns how many rewrites it made.
//
// Objects that cannot be rewritten do not stop the others: MigrateCRD then
// returns an *IncompleteError naming them, leaves storedVersions as it is,
// and the next call retries only those objects, as long as the CRD's storage
// version and storedVersions have not changed meanwhile.
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
		m.forgetPending(name)
		recordComplete(name)
		return m.dropStaleManagedFields(ctx, crd)
	}

	var n int
	var failed perobject.Failures
	retried := m.pendingFor(name, storage, crd.Status.StoredVersions)
	if retried != nil {
		n, failed, err = m.rewriteKeys(ctx, crd, storage, retried.keys())
	} else {
		n, failed, err = m.rewriteAll(ctx, crd, storage)
	}
	if err != nil {
		// The pass stopped early: the next attempt does it again.
		return n, err
	}
	if len(failed) > 0 {
		incomplete := &IncompleteError{CRD: name, Storage: storage, StoredVersions: crd.Status.StoredVersions, Failed: failed}
		m.setPending(name, &pendingObjects{storage: storage, storedVersions: crd.Status.StoredVersions, failed: failed})
		recordIncomplete(name, len(failed))
		m.warn(crd, incomplete)
		return n, incomplete
	}

	// The resourceVersion read above is the optimistic lock: if the CRD
	// changed meanwhile (e.g. another storage version), this fails and the
	// next attempt starts over.
	crd.Status.StoredVersions = []string{storage}
	if err := m.Writer.Status().Update(ctx, crd); err != nil {
		return n, fmt.Errorf("setting storedVersions of %s to [%s]: %w", name, storage, err)
	}
	m.forgetPending(name)
	recordComplete(name)
	if retried != nil {
		m.completedAfterFailures(crd, storage)
	}
	dropped, err := m.dropStaleManagedFields(ctx, crd)
	return n + dropped, err
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", errors.New("CRD " + crd.Name + " has no storage version")
}
