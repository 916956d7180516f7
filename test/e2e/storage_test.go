//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
		waitFor(t, time.Minute, "the storage migration of "+name+" to "+version, func(ctx context.Context) error {
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
