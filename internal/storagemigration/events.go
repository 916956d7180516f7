package storagemigration

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The reasons of the Events on a CRD; docs/install.md documents them.
const (
	// ReasonIncomplete: objects could not be rewritten; they are retried.
	ReasonIncomplete = "StorageMigrationIncomplete"
	// ReasonComplete: the objects that had failed were rewritten at last,
	// and storedVersions trimmed.
	ReasonComplete = "StorageMigrationComplete"
	// ReasonManagedFieldsDropped: managedFields entries of versions no
	// longer served were dropped (docs/upgrading.md).
	ReasonManagedFieldsDropped = "ManagedFieldsEntriesDropped"
	// ReasonManagedFieldsIncomplete: some objects keep such entries: they
	// could not be rewritten; they are retried.
	ReasonManagedFieldsIncomplete = "ManagedFieldsEntriesNotDropped"
	// ReasonPlatformStarted: the manager asked the platform's storage
	// version migrator to migrate the CRD (platform.go).
	ReasonPlatformStarted = "StorageMigrationByPlatform"
	// ReasonPlatformComplete: the platform's migration rewrote every
	// object and trimmed storedVersions.
	ReasonPlatformComplete = "StorageMigratedByPlatform"
	// ReasonPlatformFailed: the platform's migration failed, or no
	// controller took it up; the manager rewrites the objects itself.
	ReasonPlatformFailed = "PlatformStorageMigrationFailed"
)

// maxEventNote is the API server's limit on an Event's note.
const maxEventNote = 1024

// warn records a Warning Event on the CRD, where `kubectl describe crd`
// shows it: the Event, unlike the log, reaches whoever looks at the CRD
// because its storedVersions was not trimmed. The recorder folds repeats
// into a series, so retrying every few minutes does not flood Events.
func (m *Migrator) warn(crd *apiextensionsv1.CustomResourceDefinition, err *IncompleteError) {
	if m.Recorder == nil {
		return
	}
	note := err.Error() + "; retrying them with backoff (metric minitask_storage_migration_objects_not_rewritten)"
	m.Recorder.Eventf(crd, nil, corev1.EventTypeWarning, ReasonIncomplete, "Migrate", "%s", shorten(note))
}

// completedAfterFailures records that a migration that had objects it could
// not rewrite is complete after all.
func (m *Migrator) completedAfterFailures(crd *apiextensionsv1.CustomResourceDefinition, storage string) {
	if m.Recorder == nil {
		return
	}
	m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonComplete, "Migrate",
		"every object is rewritten in %s; status.storedVersions is now [%s]", storage, storage)
}

// shorten cuts s to at most maxEventNote bytes, marking the cut, without
// splitting a character (ToValidUTF8 drops the half of one that the cut
// leaves).
func shorten(s string) string {
	if len(s) <= maxEventNote {
		return s
	}
	const mark = "..."
	return strings.ToValidUTF8(s[:maxEventNote-len(mark)], "") + mark
}
