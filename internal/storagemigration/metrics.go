package storagemigration

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	migratedObjects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_storage_migration_objects_total",
		Help: "Objects rewritten in the storage version by the built-in storage migration.",
	}, []string{"crd"})
	migrationDone = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "minitask_storage_migration_complete",
		Help: "1 once the CRD's status.storedVersions lists only the storage version.",
	}, []string{"crd"})
	// notRewritten is what an operator alerts on: above 0, storedVersions
	// cannot be trimmed until something lets those objects be rewritten.
	notRewritten = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "minitask_storage_migration_objects_not_rewritten",
		Help: "Objects the built-in storage migration's last attempt could not rewrite in the storage version " +
			"(e.g. an admission policy denied the update); they are retried with backoff.",
	}, []string{"crd"})
	// droppedManagedFields counts what makes removing a version safe for
	// server-side apply (managedfields.go).
	droppedManagedFields = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_storage_migration_managed_fields_entries_dropped_total",
		Help: "managedFields entries naming an API version the CRD no longer serves, dropped by the built-in storage migration.",
	}, []string{"crd", "version"})
	// byPlatform and platformFailures say which path migrates a CRD
	// (platform.go).
	byPlatform = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "minitask_storage_migration_by_platform",
		Help: "1 while the platform's storage version migrator (a StorageVersionMigration the manager asked for) migrates the CRD.",
	}, []string{"crd"})
	platformFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_storage_migration_platform_failures_total",
		Help: "The platform's storage version migrations of the CRD that failed, or that no controller took up; " +
			"the built-in storage migration then rewrites the objects.",
	}, []string{"crd"})
)

func init() {
	metrics.Registry.MustRegister(migratedObjects, migrationDone, notRewritten, droppedManagedFields, byPlatform, platformFailures)
}

// recordIncomplete says that n objects of the CRD could not be rewritten.
func recordIncomplete(crd string, n int) {
	notRewritten.WithLabelValues(crd).Set(float64(n))
	migrationDone.WithLabelValues(crd).Set(0)
}

// recordComplete says that the CRD's storedVersions lists only the storage version.
func recordComplete(crd string) {
	notRewritten.WithLabelValues(crd).Set(0)
	migrationDone.WithLabelValues(crd).Set(1)
}
