package storagemigration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// The platform's storage version migrator (KEP-4192, GA in Kubernetes 1.37)
// runs in kube-controller-manager as storage-version-migrator-controller. It
// takes a StorageVersionMigration (storagemigration.k8s.io/v1) per resource,
// rewrites every object of it that was written before the migration began,
// marks the CRD StorageMigrating meanwhile and, once done, sets the CRD's
// storedVersions to the storage version itself. Where the cluster serves
// that API, the manager asks it to migrate, follows the migration to its
// end, and reports on it as on its own; where it does not (Kubernetes 1.30
// to 1.36), or the platform's migration fails, the manager rewrites the
// objects itself (MigrateCRD). The platform stops at the first object it
// cannot rewrite, and fails; the manager's own migration then goes past it,
// names it, and retries it.

// The StorageVersionMigrations the manager creates, one per CRD and
// generation (a generation's move is asked for once, by whichever manager
// leads), and reads as they progress. The manager never deletes one: each
// is owned by its CRD, and goes with it.
// +kubebuilder:rbac:groups=storagemigration.k8s.io,resources=storageversionmigrations,verbs=create;get

// platformGroupKind is the platform's storage version migration.
var platformGroupKind = schema.GroupKind{Group: svmv1.GroupName, Kind: "StorageVersionMigration"}

const (
	// defaultPlatformStartTimeout is how long a StorageVersionMigration may
	// go without a condition before the manager takes it that no controller
	// serves it (kube-controller-manager without the migrator, or none at
	// all) and migrates itself. The controller marks it Running at once, and
	// gives the garbage collector's informers up to a minute after its
	// creation to watch a new resource.
	defaultPlatformStartTimeout = 90 * time.Second
	// defaultPlatformPoll is how often the manager reads the migration it
	// follows.
	defaultPlatformPoll = time.Second
)

// platformStep is what the platform's path does next for one CRD.
type platformStep int

const (
	// platformNothing: storedVersions lists only the storage version.
	platformNothing platformStep = iota
	// platformUnserved: the cluster does not serve the API; the manager
	// migrates itself.
	platformUnserved
	// platformCreate: no migration was asked for this generation of the
	// CRD yet: ask for it.
	platformCreate
	// platformWait: the migration runs, or waits for its controller: look
	// again.
	platformWait
	// platformDone: the migration succeeded, and the platform trimmed
	// storedVersions.
	platformDone
	// platformFailed: the migration failed, ended without trimming
	// storedVersions, or no controller took it up; the manager migrates
	// itself.
	platformFailed
)

func (s platformStep) String() string {
	return [...]string{"nothing", "unserved", "create", "wait", "done", "failed"}[s]
}

// platformState is what the platform's path decides on: the CRD's storage
// version and storedVersions, whether the cluster serves the API, and the
// migration of this generation of the CRD, nil if there is none.
type platformState struct {
	storage        string
	storedVersions []string
	served         bool
	migration      *svmv1.StorageVersionMigration
	// now and startTimeout judge a migration that has no condition yet.
	now          time.Time
	startTimeout time.Duration
}

// decidePlatform says what the platform's path does next, and why when the
// manager has to migrate itself. It reads nothing and writes nothing.
func decidePlatform(s platformState) (platformStep, string) {
	trimmed := slices.Equal(s.storedVersions, []string{s.storage})
	m := s.migration
	switch {
	case trimmed && m != nil && conditionTrue(m, svmv1.MigrationSucceeded):
		return platformDone, ""
	case trimmed:
		return platformNothing, ""
	case !s.served:
		return platformUnserved, "the cluster does not serve " + svmv1.SchemeGroupVersion.String()
	case m == nil:
		return platformCreate, ""
	case conditionTrue(m, svmv1.MigrationFailed):
		return platformFailed, "failed: " + conditionMessage(m, svmv1.MigrationFailed)
	case conditionTrue(m, svmv1.MigrationSucceeded) && conditionTrue(m, svmv1.MigrationRunning):
		// The controller trims storedVersions, then marks the migration
		// no longer Running.
		return platformWait, ""
	case conditionTrue(m, svmv1.MigrationSucceeded):
		return platformFailed, fmt.Sprintf("succeeded, but status.storedVersions still lists %s (the CRD changed while it ran?)",
			strings.Join(s.storedVersions, ", "))
	case len(m.Status.Conditions) == 0 && s.now.Sub(m.CreationTimestamp.Time) >= s.startTimeout:
		return platformFailed, fmt.Sprintf("has no condition %s after its creation: no controller took it up "+
			"(is kube-controller-manager running storage-version-migrator-controller?)", s.startTimeout)
	default:
		return platformWait, ""
	}
}

func conditionTrue(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(m.Status.Conditions, string(t))
}

func conditionMessage(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, string(t)); c != nil && c.Message != "" {
		return c.Message
	}
	return "(no message)"
}

// PlatformMigrationName is the name of the StorageVersionMigration that
// moves the CRD's objects to its storage version at the CRD's generation:
// the same for every manager, so that a new leader follows the migration
// the last one asked for rather than asking again, and a new one for a
// later move (the next release's CRDs, a rollback and a roll forward).
func PlatformMigrationName(crd *apiextensionsv1.CustomResourceDefinition, storage string) string {
	return fmt.Sprintf("%s-to-%s-%d", crd.Name, storage, crd.Generation)
}

// platformUnavailableError says why the manager migrates the CRD itself.
type platformUnavailableError struct {
	// migration is the StorageVersionMigration's name, empty if none was
	// asked for.
	migration, why string
}

func (e *platformUnavailableError) Error() string {
	if e.migration == "" {
		return e.why
	}
	return "the platform's StorageVersionMigration " + e.migration + " " + e.why
}

// migrateByPlatform asks the platform to migrate the CRD where the cluster
// serves the API, and follows the migration until storedVersions is
// trimmed. It returns a *platformUnavailableError when the manager has to
// migrate itself, and another error when it could not tell (the API server
// did not answer, say): it is then tried again.
func (m *Migrator) migrateByPlatform(ctx context.Context, name string) error {
	log := logf.FromContext(ctx).WithName("storage-migration").WithValues("crd", name)
	startTimeout, poll := m.PlatformStartTimeout, m.PlatformPoll
	if startTimeout == 0 {
		startTimeout = defaultPlatformStartTimeout
	}
	if poll == 0 {
		poll = defaultPlatformPoll
	}
	served, err := m.servesPlatform()
	if err != nil {
		return fmt.Errorf("finding out whether the cluster serves %s: %w", svmv1.SchemeGroupVersion, err)
	}
	// following names the migration this call asked for or found running.
	following := ""
	defer func() {
		if following != "" {
			byPlatform.WithLabelValues(name).Set(0)
		}
	}()
	follow := func(migration string) {
		if following == "" {
			following = migration
			byPlatform.WithLabelValues(name).Set(1)
			migrationDone.WithLabelValues(name).Set(0)
		}
	}
	var lastSeen string
	for {
		crd, storage, migration, err := m.readPlatformState(ctx, name, served)
		if err != nil {
			return err
		}
		s := platformState{storage: storage, storedVersions: crd.Status.StoredVersions, served: served,
			migration: migration, now: time.Now(), startTimeout: startTimeout}
		step, why := decidePlatform(s)
		if step == platformFailed && conditionTrue(migration, svmv1.MigrationSucceeded) {
			// The CRD was read before the migration: read it again, in
			// case the platform trimmed storedVersions in between.
			if err := m.Reader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return fmt.Errorf("getting CRD %s: %w", name, err)
			}
			s.storedVersions = crd.Status.StoredVersions
			step, why = decidePlatform(s)
		}
		migrationName := PlatformMigrationName(crd, storage)
		switch step {
		case platformNothing:
			return nil
		case platformUnserved:
			log.Info("the cluster does not serve the platform's storage version migration: the manager migrates the CRD itself",
				"api", svmv1.SchemeGroupVersion.String())
			return &platformUnavailableError{why: why}
		case platformDone:
			if following == "" {
				// Done by an earlier start of the manager.
				return nil
			}
			log.Info("the platform's storage version migration is complete", "storageVersionMigration", migrationName,
				"storedVersions", crd.Status.StoredVersions)
			m.platformComplete(crd, migration, storage)
			return nil
		case platformFailed:
			platformFailures.WithLabelValues(name).Inc()
			err := &platformUnavailableError{migration: migrationName, why: why}
			log.Error(err, "the manager migrates the CRD itself")
			m.platformFailed(crd, err)
			return err
		case platformCreate:
			created, err := m.createPlatformMigration(ctx, crd, storage)
			if err != nil {
				if apierrors.IsForbidden(err) {
					// An install whose role predates the platform's path.
					return &platformUnavailableError{why: "cannot be asked for: " + err.Error()}
				}
				return err
			}
			if created {
				log.Info("asked the platform to migrate the CRD", "storageVersionMigration", migrationName,
					"storage", storage, "storedVersions", crd.Status.StoredVersions)
				m.platformStarted(crd, migrationName, storage)
			}
			follow(migrationName)
			continue
		}
		// platformWait.
		if following == "" {
			log.Info("following the platform's storage version migration", "storageVersionMigration", migrationName)
		}
		follow(migrationName)
		if seen := conditionsLine(migration); seen != lastSeen {
			log.V(1).Info("the platform's storage version migration progresses", "storageVersionMigration", migrationName,
				"conditions", seen)
			lastSeen = seen
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// servesPlatform says whether the cluster serves the platform's storage
// version migration, as discovery says: the client's REST mapper looks the
// group up when it does not know it.
func (m *Migrator) servesPlatform() (bool, error) {
	if m.ServesPlatform != nil {
		return m.ServesPlatform()
	}
	_, err := m.Writer.RESTMapper().RESTMapping(platformGroupKind, svmv1.SchemeGroupVersion.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, err
	}
}

// readPlatformState reads the CRD, its storage version and, where the
// cluster serves the API, the migration of its generation, nil if there is
// none.
func (m *Migrator) readPlatformState(ctx context.Context, name string, served bool) (*apiextensionsv1.CustomResourceDefinition, string, *svmv1.StorageVersionMigration, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Reader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return nil, "", nil, fmt.Errorf("getting CRD %s: %w", name, err)
	}
	storage, err := storageVersion(crd)
	if err != nil {
		return nil, "", nil, err
	}
	if !served {
		return crd, storage, nil, nil
	}
	migration := &svmv1.StorageVersionMigration{}
	err = m.Reader.Get(ctx, client.ObjectKey{Name: PlatformMigrationName(crd, storage)}, migration)
	switch {
	case apierrors.IsNotFound(err):
		return crd, storage, nil, nil
	case err != nil:
		return nil, "", nil, fmt.Errorf("getting StorageVersionMigration %s: %w", PlatformMigrationName(crd, storage), err)
	}
	return crd, storage, migration, nil
}

// createPlatformMigration asks the platform to migrate the CRD's resource.
// The migration is owned by the CRD, so that it goes with it. It returns
// false if another manager asked first.
func (m *Migrator) createPlatformMigration(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (bool, error) {
	migration := &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{
			Name:   PlatformMigrationName(crd, storage),
			Labels: map[string]string{"app.kubernetes.io/managed-by": "minitask"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition",
				Name: crd.Name, UID: crd.UID,
			}},
		},
		Spec: svmv1.StorageVersionMigrationSpec{
			Resource: metav1.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural},
		},
	}
	err := m.Writer.Create(ctx, migration)
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("creating StorageVersionMigration %s: %w", migration.Name, err)
	}
	return true, nil
}

// conditionsLine is a migration's conditions in one line, for the log.
func conditionsLine(m *svmv1.StorageVersionMigration) string {
	var parts []string
	for _, c := range m.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Message))
	}
	return strings.Join(parts, "; ")
}

// platformStarted records that the manager asked the platform to migrate.
func (m *Migrator) platformStarted(crd *apiextensionsv1.CustomResourceDefinition, migration, storage string) {
	if m.Recorder == nil {
		return
	}
	m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonPlatformStarted, "Migrate",
		"status.storedVersions lists %s: asked the platform to rewrite every object in %s (StorageVersionMigration %s)",
		strings.Join(crd.Status.StoredVersions, ", "), storage, migration)
}

// platformComplete records that the platform's migration is complete.
func (m *Migrator) platformComplete(crd *apiextensionsv1.CustomResourceDefinition, migration *svmv1.StorageVersionMigration, storage string) {
	if m.Recorder == nil {
		return
	}
	m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonPlatformComplete, "Migrate",
		"the platform's StorageVersionMigration %s rewrote every object in %s; status.storedVersions is now [%s]",
		migration.Name, storage, storage)
}

// platformFailed records that the manager migrates the CRD itself, the
// platform's migration having failed.
func (m *Migrator) platformFailed(crd *apiextensionsv1.CustomResourceDefinition, err error) {
	if m.Recorder == nil {
		return
	}
	note := err.Error() + "; the manager rewrites the objects itself"
	m.Recorder.Eventf(crd, nil, corev1.EventTypeWarning, ReasonPlatformFailed, "Migrate", "%s", shorten(note))
}

// isPlatformUnavailable says whether err sends the CRD to the manager's own
// migration.
func isPlatformUnavailable(err error) bool {
	var u *platformUnavailableError
	return errors.As(err, &u)
}
