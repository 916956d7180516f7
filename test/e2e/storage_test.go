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

// checkStorageMigrated waits until the manager's storage migration has
// trimmed both CRDs' storedVersions to [v1beta1], then reads etcd itself:
// every minitask object must be stored as v1beta1.
func (r *rehearsal) checkStorageMigrated() {
	r.stored = checkStorageMigrated(r.t, r.c)
}

// checkStorageMigrated is rehearsal.checkStorageMigrated on cluster c; it
// returns the minitask keys in etcd by the apiVersion they are stored in.
func checkStorageMigrated(t testing.TB, c *cluster) map[string]int {
	t.Helper()
	for _, name := range crdNames {
		waitFor(t, time.Minute, "the storage migration of "+name, func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			if !slices.Equal(crd.Status.StoredVersions, []string{"v1beta1"}) {
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
	stored := map[string]int{}
	for _, kv := range resp.Kvs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("decoding etcd key %s: %v", kv.Key, err)
		}
		stored[obj.APIVersion]++
		if obj.APIVersion != "minitask.dev/v1beta1" {
			t.Errorf("etcd key %s is stored as %s, want minitask.dev/v1beta1", kv.Key, obj.APIVersion)
		}
	}
	var tasks v1beta1.TaskList
	var runs v1beta1.TaskRunList
	for _, list := range []client.ObjectList{&tasks, &runs} {
		if err := c.client.List(ctx, list); err != nil {
			t.Fatalf("listing %T: %v", list, err)
		}
	}
	if diff := cmp.Diff(map[string]int{"minitask.dev/v1beta1": len(tasks.Items) + len(runs.Items)}, stored); diff != "" {
		t.Errorf("minitask objects in etcd by the apiVersion they are stored in (-want +got):\n%s", diff)
	}
	return stored
}
