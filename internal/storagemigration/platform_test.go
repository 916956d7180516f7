package storagemigration_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// notServed is a cluster that does not serve the platform's storage
// version migration, as Kubernetes 1.30 to 1.36.
func notServed() (bool, error) { return false, nil }

// platformObjects stores two Tasks and two TaskRuns as v1beta1, as release
// 5 did, then makes v1 the storage version, as release 6's CRDs do, and
// returns their namespace.
func platformObjects(t *testing.T) string {
	t.Helper()
	setStorageVersion(t, "v1beta1")
	migrate(t, &storagemigration.Migrator{Reader: env.Client, Writer: env.Client})
	ns := env.Namespace(t)
	for _, name := range []string{"a", "b"} {
		env.Create(t, ns,
			&v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}},
			&v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: name}}})
	}
	setStorageVersion(t, "v1")
	return ns
}

// platformMigration waits until the Migrator has asked the platform to
// migrate the CRD, and checks what it asked for: the CRD's resource, in a
// migration of the stable name that the CRD owns.
func platformMigration(t *testing.T, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	svm := &svmv1.StorageVersionMigration{}
	key := client.ObjectKey{Name: storagemigration.PlatformMigrationName(crd, "v1")}
	testenv.Eventually(t, func() (bool, string) {
		err := env.Client.Get(context.Background(), key, svm)
		return err == nil, fmt.Sprint(err)
	}, "StorageVersionMigration "+key.Name)
	if want := (metav1.GroupResource{Group: "minitask.dev", Resource: crd.Spec.Names.Plural}); svm.Spec.Resource != want {
		t.Errorf("StorageVersionMigration %s migrates %v, want %v", svm.Name, svm.Spec.Resource, want)
	}
	if refs := svm.OwnerReferences; len(refs) != 1 || refs[0].UID != crd.UID || refs[0].Kind != "CustomResourceDefinition" {
		t.Errorf("StorageVersionMigration %s's owners are %+v, want the CRD %s (uid %s)", svm.Name, refs, name, crd.UID)
	}
	return svm
}

// setConditions writes the migration's status as the platform's controller
// does.
func setConditions(t *testing.T, svm *svmv1.StorageVersionMigration, conds ...metav1.Condition) {
	t.Helper()
	for _, c := range conds {
		meta.SetStatusCondition(&svm.Status.Conditions, c)
	}
	if err := env.Client.Status().Update(context.Background(), svm); err != nil {
		t.Fatalf("writing the status of StorageVersionMigration %s: %v", svm.Name, err)
	}
}

// TestMigratorFollowsThePlatform plays the platform's storage version
// migrator (envtest serves its API, but runs no kube-controller-manager):
// the Migrator must ask it to migrate each CRD, one StorageVersionMigration
// each, and follow it to its end, rewriting nothing itself; its metrics and
// Events say so. The platform rewrites the objects and trims storedVersions,
// as its controller does.
func TestMigratorFollowsThePlatform(t *testing.T) {
	ctx := context.Background()
	etcd := etcdClient(t)
	ns := platformObjects(t)
	recorder := events.NewFakeRecorder(20)
	m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client, Recorder: recorder, PlatformPoll: 50 * time.Millisecond}
	type result struct {
		crd string
		n   int
		err error
	}
	done := make(chan result, len(storagemigration.CRDs))
	for _, crd := range storagemigration.CRDs {
		go func() {
			n, err := m.Migrate(ctx, crd)
			done <- result{crd, n, err}
		}()
	}

	for _, crd := range storagemigration.CRDs {
		svm := platformMigration(t, crd)
		running := metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue, Reason: "MigrationRunning", Message: "The migration is running"}
		setConditions(t, svm, running)
		testenv.Eventually(t, func() (bool, string) {
			got := gauges(t, "minitask_storage_migration_by_platform")[crd]
			return got == 1, fmt.Sprint(got)
		}, "minitask_storage_migration_by_platform of "+crd+" to be 1")
		// The platform rewrites every object (a write that changes nothing,
		// as the manager's own is), then says so, then trims.
		rewriteAll(t, ns, svm.Spec.Resource.Resource)
		running.Message = "The migration is running, 2 objects verified migrated"
		setConditions(t, svm, running,
			metav1.Condition{Type: string(svmv1.MigrationSucceeded), Status: metav1.ConditionTrue, Reason: "StorageVersionMigrationSucceeded", Message: "Migration completed"})
		crdObj := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: crd}, crdObj); err != nil {
			t.Fatal(err)
		}
		crdObj.Status.StoredVersions = []string{"v1"}
		if err := env.Client.Status().Update(ctx, crdObj); err != nil {
			t.Fatal(err)
		}
		setConditions(t, svm, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionFalse, Reason: "MigrationCompleted", Message: "Migration completed"})
	}
	for range storagemigration.CRDs {
		select {
		case r := <-done:
			if r.err != nil || r.n != 0 {
				t.Errorf("Migrate(%s) = %d, %v; want 0 objects rewritten by the manager, no error", r.crd, r.n, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Migrate did not return once the platform's migrations ended")
		}
	}
	for _, crd := range storagemigration.CRDs {
		if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1"}) {
			t.Errorf("%s storedVersions = %v, want [v1]", crd, got)
		}
	}
	if diff := cmp.Diff(map[string]int{"minitask.dev/v1": 4}, storedAPIVersions(t, etcd, ns)); diff != "" {
		t.Errorf("objects in etcd by the version they are stored in (-want +got):\n%s", diff)
	}
	want := map[string]float64{"tasks.minitask.dev": 0, "taskruns.minitask.dev": 0}
	if diff := cmp.Diff(want, gauges(t, "minitask_storage_migration_by_platform")); diff != "" {
		t.Errorf("minitask_storage_migration_by_platform once done (-want +got):\n%s", diff)
	}
	want = map[string]float64{"tasks.minitask.dev": 1, "taskruns.minitask.dev": 1}
	if diff := cmp.Diff(want, gauges(t, "minitask_storage_migration_complete")); diff != "" {
		t.Errorf("minitask_storage_migration_complete once done (-want +got):\n%s", diff)
	}
	got := drain(recorder)
	for _, re := range []string{
		`Normal StorageMigrationByPlatform status.storedVersions lists v1beta1, v1: asked the platform to rewrite every object in v1 \(StorageVersionMigration tasks.minitask.dev-to-v1-\d+\)`,
		`Normal StorageMigrationByPlatform .*\(StorageVersionMigration taskruns.minitask.dev-to-v1-\d+\)`,
		`Normal StorageMigratedByPlatform the platform's StorageVersionMigration tasks.minitask.dev-to-v1-\d+ rewrote every object in v1; status.storedVersions is now \[v1\]`,
		`Normal StorageMigratedByPlatform the platform's StorageVersionMigration taskruns.minitask.dev-to-v1-\d+ `,
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("no Event matches %s; the Events:\n%s", re, got)
		}
	}

	// Once done, a later start asks nothing and writes nothing.
	for _, crd := range storagemigration.CRDs {
		if n, err := m.Migrate(ctx, crd); n != 0 || err != nil {
			t.Errorf("Migrate(%s) again = %d, %v; want 0, nil", crd, n, err)
		}
	}
	if got := drain(recorder); got != "" {
		t.Errorf("Events of a start with nothing to migrate:\n%s", got)
	}
}

// TestMigratorMigratesItselfWhenThePlatformCannot: where the platform's
// migration fails (it stops at the first object it cannot rewrite), and
// where no controller takes it up, the manager rewrites every object
// itself, says why in a Warning Event, and counts it.
func TestMigratorMigratesItselfWhenThePlatformCannot(t *testing.T) {
	for _, tc := range []struct {
		name string
		// platform plays the platform's controller on the migration.
		platform func(t *testing.T, svm *svmv1.StorageVersionMigration)
		warning  string
	}{{
		name: "failed",
		platform: func(t *testing.T, svm *svmv1.StorageVersionMigration) {
			setConditions(t, svm,
				metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue, Reason: "MigrationRunning", Message: "The migration is running, 1/2 objects not yet migrated"},
				metav1.Condition{Type: string(svmv1.MigrationFailed), Status: metav1.ConditionTrue, Reason: "StorageVersionMigrationFailed",
					Message: `1/2 not yet migrated. migration encountered unhandled error: a policy forbids changing b`})
		},
		warning: `the platform's StorageVersionMigration \S+ failed: 1/2 not yet migrated. migration encountered unhandled error: a policy forbids changing b; the manager rewrites the objects itself`,
	}, {
		name:     "no controller",
		platform: func(*testing.T, *svmv1.StorageVersionMigration) {},
		warning:  `the platform's StorageVersionMigration \S+ has no condition 1s after its creation: no controller took it up`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			etcd := etcdClient(t)
			ns := platformObjects(t)
			recorder := events.NewFakeRecorder(20)
			m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client, Recorder: recorder,
				PlatformPoll: 50 * time.Millisecond, PlatformStartTimeout: time.Second}
			failuresBefore := counters(t, "minitask_storage_migration_platform_failures_total")
			done := make(chan error, 1)
			go func() {
				var errs []error
				for _, crd := range storagemigration.CRDs {
					if _, err := m.Migrate(ctx, crd); err != nil {
						errs = append(errs, fmt.Errorf("migrating %s: %w", crd, err))
					}
				}
				done <- fmt.Errorf("%v", errs)
			}()
			for _, crd := range storagemigration.CRDs {
				tc.platform(t, platformMigration(t, crd))
			}
			select {
			case err := <-done:
				if err.Error() != "[]" {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Migrate did not return")
			}
			for _, crd := range storagemigration.CRDs {
				if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1"}) {
					t.Errorf("%s storedVersions = %v, want [v1]", crd, got)
				}
				if got := counters(t, "minitask_storage_migration_platform_failures_total")[crd] - failuresBefore[crd]; got != 1 {
					t.Errorf("minitask_storage_migration_platform_failures_total of %s went up by %v, want 1", crd, got)
				}
			}
			if diff := cmp.Diff(map[string]int{"minitask.dev/v1": 4}, storedAPIVersions(t, etcd, ns)); diff != "" {
				t.Errorf("objects in etcd by the version they are stored in (-want +got):\n%s", diff)
			}
			got := drain(recorder)
			if n := len(regexp.MustCompile(`Warning PlatformStorageMigrationFailed `+tc.warning).FindAllString(got, -1)); n != len(storagemigration.CRDs) {
				t.Errorf("%d Warning Events say %s, want one per CRD; the Events:\n%s", n, tc.warning, got)
			}
		})
	}
}

// rewriteAll writes every object of resource in ns without changing it,
// as the platform's migrator does.
func rewriteAll(t *testing.T, ns, resource string) {
	t.Helper()
	list := &metav1.PartialObjectMetadataList{}
	kind := map[string]string{"tasks": "TaskList", "taskruns": "TaskRunList"}[resource]
	list.SetGroupVersionKind(v1beta1.GroupVersion.WithKind(kind))
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		obj := &list.Items[i]
		obj.SetGroupVersionKind(v1beta1.GroupVersion.WithKind(kind[:len(kind)-len("List")]))
		err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte("{}")))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("rewriting %s %s: %v", resource, obj.Name, err)
		}
	}
}

// counters returns the values of the counter named name on
// controller-runtime's metrics registry, by their crd label.
func counters(t *testing.T, name string) map[string]float64 {
	return byCRD(t, name, func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}
