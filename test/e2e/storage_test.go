//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// crdNames are minitask's CustomResourceDefinitions.
var crdNames = []string{"tasks.minitask.dev", "taskruns.minitask.dev"}

// currentStorage is the version the current release stores: v1, from
// release 6. Every frozen release the rehearsals run stored v1beta1 (the
// first release's v1alpha1 is checked by the first release's own tests).
const (
	currentStorage = "v1"
	frozenStorage  = "v1beta1"
)

// checkStorageMigrated waits until the manager's storage migration has
// trimmed both CRDs' storedVersions to [version], the storage version of
// the release running, then reads etcd itself: every minitask object must
// be stored as version.
func (r *rehearsal) checkStorageMigrated(version string) {
	r.stored = checkStorageMigrated(r.t, r.c, version)
	r.storage = version
}

// checkStorageMigrated is rehearsal.checkStorageMigrated on cluster c; it
// returns the minitask keys in etcd by the apiVersion they are stored in.
func checkStorageMigrated(t testing.TB, c *cluster, version string) map[string]int {
	t.Helper()
	for _, name := range crdNames {
		// The platform's migrator waits until the garbage collector's
		// informer of the resource has seen the migration's resourceVersion:
		// without writes to the resource, until the API server's next watch
		// bookmark, up to a minute later, and then its retry, which backs
		// off meanwhile (the Tasks' took 80 s longer than the TaskRuns',
		// which the runs in flight write, in TestUpgradeFromRelease5).
		waitFor(t, 4*time.Minute, "the storage migration of "+name+" to "+version, func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			if !slices.Equal(crd.Status.StoredVersions, []string{version}) {
				return fmt.Errorf("storedVersions %v", crd.Status.StoredVersions)
			}
			return nil
		})
	}

	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{c.env["MINITASK_ETCD_ENDPOINT"]}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to etcd: %v", err)
	}
	defer etcd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := etcd.Get(ctx, "/registry/minitask.dev/", clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("reading etcd: %v", err)
	}
	want := minitaskGroup + "/" + version
	stored := map[string]int{}
	for _, kv := range resp.Kvs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("decoding etcd key %s: %v", kv.Key, err)
		}
		stored[obj.APIVersion]++
		if obj.APIVersion != want {
			t.Errorf("etcd key %s is stored as %s, want %s", kv.Key, obj.APIVersion, want)
		}
	}
	var tasks v1beta1.TaskList
	var runs v1beta1.TaskRunList
	for _, list := range []client.ObjectList{&tasks, &runs} {
		if err := c.client.List(ctx, list); err != nil {
			t.Fatalf("listing %T: %v", list, err)
		}
	}
	if diff := cmp.Diff(map[string]int{want: len(tasks.Items) + len(runs.Items)}, stored); diff != "" {
		t.Errorf("minitask objects in etcd by the apiVersion they are stored in (-want +got):\n%s", diff)
	}
	return stored
}

// minitaskGroup is the API group of Tasks and TaskRuns.
const minitaskGroup = "minitask.dev"

// withoutStorageVersionMigration creates a cluster that does not serve the
// platform's storage version migration and runs no controller for it, as
// Kubernetes 1.30 to 1.36 by default: the manager migrates storage itself.
func withoutStorageVersionMigration(args []string) []string {
	return append(args, "--no-storage-version-migration")
}

// The paths a storage move takes (checkMigratedBy).
const (
	byPlatform = true
	byManager  = false
)

// checkMigratedBy checks which path moved the objects to the storage
// version at the current manager's last start. By the platform (a 1.37
// cluster): one StorageVersionMigration per CRD, of the name the manager
// gives it, owned by the CRD, succeeded; the CRD's StorageMigrating
// condition saying the platform trimmed storedVersions; the manager having
// asked for both and rewritten nothing itself. By the manager (a cluster
// without the API): the API not served, and the manager saying so and
// rewriting the objects itself.
func (r *rehearsal) checkMigratedBy(platform bool) {
	t := r.t
	t.Helper()
	ctx := context.Background()
	log := r.m.logSinceStart()
	var list svmv1.StorageVersionMigrationList
	err := r.c.client.List(ctx, &list)
	if !platform {
		if !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
			t.Errorf("listing StorageVersionMigrations on a cluster that should not serve them: %v (%d found)", err, len(list.Items))
		}
		if n := strings.Count(log, "the cluster does not serve the platform's storage version migration"); n != len(crdNames) {
			t.Errorf("the manager said %d times that the cluster does not serve the platform's storage version migration, want once per CRD", n)
		}
		if strings.Contains(log, "asked the platform") {
			t.Error("the manager asked the platform to migrate on a cluster that does not serve the API")
		}
		return
	}
	if err != nil {
		t.Fatalf("listing StorageVersionMigrations: %v", err)
	}
	byResource := map[string]svmv1.StorageVersionMigration{}
	for _, m := range list.Items {
		byResource[m.Spec.Resource.Resource+"."+m.Spec.Resource.Group] = m
	}
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		m, ok := byResource[name]
		switch {
		case !ok:
			t.Errorf("no StorageVersionMigration of %s; there are %d", name, len(list.Items))
			continue
		case !regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `-to-v1-\d+$`).MatchString(m.Name):
			t.Errorf("the StorageVersionMigration of %s is named %s, want %s-to-v1-GENERATION", name, m.Name, name)
		case len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != crd.UID:
			t.Errorf("StorageVersionMigration %s's owners are %+v, want CRD %s", m.Name, m.OwnerReferences, name)
		}
		if !meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationSucceeded)) {
			t.Errorf("StorageVersionMigration %s did not succeed: %+v", m.Name, m.Status.Conditions)
		}
		var migrating *apiextensionsv1.CustomResourceDefinitionCondition
		for i, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.StorageMigrating {
				migrating = &crd.Status.Conditions[i]
			}
		}
		if migrating == nil || migrating.Status != apiextensionsv1.ConditionFalse || migrating.Reason != "MigrationSucceeded" ||
			!strings.Contains(migrating.Message, "the stored versions have been updated") {
			t.Errorf("CRD %s's StorageMigrating condition is %+v, want False, MigrationSucceeded, the stored versions updated", name, migrating)
		}
		t.Logf("StorageVersionMigration %s: %s", m.Name, conditionsOf(m))
	}
	// storedVersions is trimmed by the platform, and the manager reads the
	// migration once a second: it may log the end of one CRD's move up to
	// a poll after checkStorageMigrated saw it.
	waitFor(t, 30*time.Second, "the manager to log the platform's migrations complete", func(context.Context) error {
		log := r.m.logSinceStart()
		for _, want := range []string{"asked the platform to migrate the CRD", "the platform's storage version migration is complete"} {
			if n := strings.Count(log, want); n != len(crdNames) {
				return fmt.Errorf("the manager logged %q %d times, want once per CRD", want, n)
			}
		}
		if n := len(regexp.MustCompile(`storage migration complete\t\{[^}]*"rewritten": 0[,}]`).FindAllString(log, -1)); n != len(crdNames) {
			return fmt.Errorf("the manager logged %d storage migrations complete having rewritten nothing itself, want one per CRD", n)
		}
		return nil
	})
}

// conditionsOf is a StorageVersionMigration's conditions in one line.
func conditionsOf(m svmv1.StorageVersionMigration) string {
	var parts []string
	for _, c := range m.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s %s (%s) at %s", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime.Format(time.TimeOnly)))
	}
	return strings.Join(parts, "; ")
}
