package storagemigration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// TestMigratorRewritesObjectsStoredInV1alpha1 stores objects as the first
// release did (storage version v1alpha1), switches storage to v1beta1 as an
// upgrade does, and checks in etcd itself that the migration rewrote them all.
func TestMigratorRewritesObjectsStoredInV1alpha1(t *testing.T) {
	ctx := context.Background()
	etcd := etcdClient(t)

	setStorageVersion(t, "v1alpha1")
	ns := env.Namespace(t)
	const n = 12
	timeout := &v1beta1.Duration{Duration: time.Minute}
	for i := range n {
		name := fmt.Sprintf("obj-%02d", i)
		task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1beta1.TaskSpec{Description: "kept", Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}}
		run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: name}, Timeout: timeout}}
		for _, o := range []client.Object{task, run} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatalf("creating %s: %v", name, err)
			}
		}
	}
	if got := storedAPIVersions(t, etcd, ns); got["minitask.dev/v1alpha1"] != 2*n {
		t.Fatalf("before the upgrade, etcd holds %v; want all %d objects as v1alpha1", got, 2*n)
	}
	setStorageVersion(t, "v1beta1")

	m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client}
	for _, crd := range storagemigration.CRDs {
		rewritten, err := m.MigrateCRD(ctx, crd)
		if err != nil {
			t.Fatalf("migrating %s: %v", crd, err)
		}
		if rewritten < n {
			t.Errorf("%s: rewrote %d objects, want at least %d", crd, rewritten, n)
		}
		if got := storedVersions(t, crd); !cmp.Equal(got, []string{"v1beta1"}) {
			t.Errorf("%s storedVersions = %v, want [v1beta1]", crd, got)
		}
		// Idempotent: nothing left to do.
		if again, err := m.MigrateCRD(ctx, crd); err != nil || again != 0 {
			t.Errorf("second migration of %s rewrote %d (err %v), want 0", crd, again, err)
		}
	}
	if diff := cmp.Diff(map[string]int{"minitask.dev/v1beta1": 2 * n}, storedAPIVersions(t, etcd, ns)); diff != "" {
		t.Errorf("etcd after migration (-want +got):\n%s", diff)
	}
	run := &v1beta1.TaskRun{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "obj-00"}, run); err != nil {
		t.Fatal(err)
	}
	if run.Spec.Timeout == nil || run.Spec.Timeout.Duration != time.Minute {
		t.Errorf("the v1beta1-only timeout did not survive storage in v1alpha1 and migration: %v", run.Spec.Timeout)
	}
}

// setStorageVersion makes version the CRDs' storage version and waits until
// the API server stores new objects in it.
func setStorageVersion(t testing.TB, version string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range storagemigration.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		if err := env.Client.Update(ctx, crd); err != nil {
			t.Fatalf("making %s the storage version of %s: %v", version, name, err)
		}
	}
	etcd := etcdClient(t)
	ns := env.Namespace(t)
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		probe := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i), Namespace: ns},
			Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}}
		if err := env.Client.Create(ctx, probe); err != nil {
			t.Fatal(err)
		}
		if storedAPIVersions(t, etcd, ns)["minitask.dev/"+version] > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not store Tasks as %s", version)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func storedVersions(t testing.TB, name string) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// etcdClient connects to the test etcd, for checks of what is stored, until
// the test ends.
func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{env.EtcdEndpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to etcd: %v", err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	return etcd
}

// storedAPIVersions counts the minitask objects of namespace ns in etcd by the
// apiVersion they are encoded in.
func storedAPIVersions(t testing.TB, etcd *clientv3.Client, ns string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, version := range storedAPIVersionOf(t, etcd, ns) {
		got[version]++
	}
	return got
}

// storedAPIVersionOf returns the apiVersion each minitask object of namespace
// ns is encoded in, in etcd, by "RESOURCE/NAME".
func storedAPIVersionOf(t testing.TB, etcd *clientv3.Client, ns string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, resource := range []string{"tasks", "taskruns"} {
		prefix := "/registry/minitask.dev/" + resource + "/" + ns + "/"
		resp, err := etcd.Get(context.Background(), prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatalf("reading etcd: %v", err)
		}
		for _, kv := range resp.Kvs {
			var obj struct {
				APIVersion string `json:"apiVersion"`
			}
			if err := json.Unmarshal(kv.Value, &obj); err != nil {
				t.Fatalf("decoding %s: %v", kv.Key, err)
			}
			got[resource+"/"+strings.TrimPrefix(string(kv.Key), prefix)] = obj.APIVersion
		}
	}
	return got
}
