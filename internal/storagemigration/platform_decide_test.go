package storagemigration

import (
	"strings"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDecidePlatform is the platform's path's every decision: which
// clusters and which states of the migration it asked for let the platform
// migrate, and which send the CRD to the manager's own migration, and why.
func TestDecidePlatform(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	migration := func(age time.Duration, conds ...metav1.Condition) *svmv1.StorageVersionMigration {
		return &svmv1.StorageVersionMigration{
			ObjectMeta: metav1.ObjectMeta{Name: "taskruns.minitask.dev-to-v1-3", CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Status:     svmv1.StorageVersionMigrationStatus{Conditions: conds},
		}
	}
	cond := func(t svmv1.MigrationConditionType, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: status, Reason: "R", Message: msg}
	}
	running := cond(svmv1.MigrationRunning, metav1.ConditionTrue, "The migration is running")
	notRunning := cond(svmv1.MigrationRunning, metav1.ConditionFalse, "Migration completed")
	succeeded := cond(svmv1.MigrationSucceeded, metav1.ConditionTrue, "Migration completed")
	failed := cond(svmv1.MigrationFailed, metav1.ConditionTrue, `1/4 not yet migrated. migration encountered unhandled error: admission webhook "deny" denied the request`)
	moving := []string{"v1beta1", "v1"}

	for _, tc := range []struct {
		name           string
		storedVersions []string
		served         bool
		migration      *svmv1.StorageVersionMigration
		want           platformStep
		// why is part of what the manager says when it migrates itself.
		why string
	}{
		{name: "nothing stored in another version, on 1.37", storedVersions: []string{"v1"}, served: true, want: platformNothing},
		{name: "nothing stored in another version, on 1.36", storedVersions: []string{"v1"}, want: platformNothing},
		{name: "1.30 to 1.36: the API is not served", storedVersions: moving, want: platformUnserved, why: "does not serve storagemigration.k8s.io/v1"},
		{name: "1.37: no migration asked for yet", storedVersions: moving, served: true, want: platformCreate},
		{name: "asked, no controller yet", storedVersions: moving, served: true, migration: migration(10 * time.Second), want: platformWait},
		{name: "running", storedVersions: moving, served: true, migration: migration(time.Hour, running), want: platformWait},
		{name: "succeeded, storedVersions not trimmed yet", storedVersions: moving, served: true,
			migration: migration(time.Minute, running, succeeded), want: platformWait},
		{name: "succeeded and trimmed", storedVersions: []string{"v1"}, served: true,
			migration: migration(time.Minute, notRunning, succeeded), want: platformDone},
		{name: "trimmed while the runner has yet to say so", storedVersions: []string{"v1"}, served: true,
			migration: migration(time.Minute, running, succeeded), want: platformDone},
		{name: "succeeded but not trimmed: the CRD changed while it ran", storedVersions: moving, served: true,
			migration: migration(time.Minute, notRunning, succeeded), want: platformFailed, why: "succeeded, but status.storedVersions still lists v1beta1, v1"},
		{name: "failed on an object it cannot rewrite", storedVersions: moving, served: true,
			migration: migration(time.Minute, running, failed), want: platformFailed, why: `failed: 1/4 not yet migrated. migration encountered unhandled error: admission webhook "deny"`},
		{name: "failed and cleaned up", storedVersions: moving, served: true,
			migration: migration(time.Minute, notRunning, failed), want: platformFailed, why: "failed: "},
		{name: "no controller took it up", storedVersions: moving, served: true, migration: migration(2 * time.Minute),
			want: platformFailed, why: "has no condition 1m30s after its creation: no controller took it up"},
		{name: "served, then the API turned off: what was asked is left", storedVersions: moving, migration: migration(time.Minute, running),
			want: platformUnserved, why: "does not serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := decidePlatform(platformState{storage: "v1", storedVersions: tc.storedVersions, served: tc.served,
				migration: tc.migration, now: now, startTimeout: defaultPlatformStartTimeout})
			if got != tc.want {
				t.Errorf("decidePlatform = %v (%q), want %v", got, why, tc.want)
			}
			if !strings.Contains(why, tc.why) || (tc.why == "" && why != "") {
				t.Errorf("decidePlatform says %q, want it to say %q", why, tc.why)
			}
		})
	}
}

// TestPlatformMigrationName: one name per CRD, storage version and
// generation, so that managers agree on it and a later move gets its own.
func TestPlatformMigrationName(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "taskruns.minitask.dev", Generation: 7}}
	if got, want := PlatformMigrationName(crd, "v1"), "taskruns.minitask.dev-to-v1-7"; got != want {
		t.Errorf("PlatformMigrationName = %q, want %q", got, want)
	}
}
