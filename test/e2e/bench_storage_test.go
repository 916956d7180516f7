//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkStorageMove compares the two paths of release 6's storage move
// (install.md, "Which path migrates storage") on the same objects: 5,000
// Tasks and 5,000 TaskRuns (BENCH_STORAGE_OBJECTS sets the total), each
// pair as the rehearsals' are, stored as v1beta1 as release 5 left them,
// then v1 made the storage version, as release 6's CRDs do. Each path has a
// cluster of its own, one after the other: path=platform serves the
// platform's storage version migration (Kubernetes 1.37), and the manager
// asks kube-controller-manager's migrator to rewrite the objects;
// path=manager does not (hack/local-cluster.sh create
// --no-storage-version-migration, as 1.30 to 1.36), and the manager
// rewrites them itself. The time runs from the manager's start (its
// controller off: the webhooks and the migration alone) until both CRDs'
// storedVersions are [v1], etcd then holding every object as v1. The CPU
// seconds are the cluster's own processes' over that time (ReadPIDs: not
// those of another cluster on the machine): kube-apiserver's, per object
// too, etcd's, kube-controller-manager's (the platform's migrator, and the
// garbage collector whose informers it reads) and the manager's (the
// conversion webhook, and its migration); kube-apiserver's per object is
// over what it spends idle (20 s measured after), which a move that waits
// pays for longer. The creation of the objects is
// the reference, a write each, as a rewrite is. It ignores b.N: run it with
// -benchtime=1x.
func BenchmarkStorageMove(b *testing.B) {
	objects := 10000
	if s := os.Getenv("BENCH_STORAGE_OBJECTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 || n%2 != 0 {
			b.Fatalf("BENCH_STORAGE_OBJECTS=%q: want an even count of objects, half Tasks, half TaskRuns", s)
		}
		objects = n
	}
	for _, path := range []struct {
		name string
		opts []clusterOption
	}{
		{"platform", nil},
		{"manager", []clusterOption{withoutStorageVersionMigration}},
	} {
		b.Run("path="+path.name, func(b *testing.B) { benchStorageMove(b, path.name, objects, path.opts...) })
	}
}

// idleSample is how long BenchmarkStorageMove measures an idle cluster.
const idleSample = 20 * time.Second

func benchStorageMove(b *testing.B, path string, objects int, opts ...clusterOption) {
	ctx := context.Background()
	c := newCluster(b, "bench-storage-"+path, opts...)
	// The conversion webhook serves every write in a version not stored.
	webhooksOnly := startManager(b, c, "--enable-controller=false", "--storage-migration=false")
	setClusterStorage(b, c, "v1beta1")
	names := runNames("obj", objects/2)
	start := time.Now()
	inParallel(b, 2*loadWorkers, names, func(name string) error {
		// Written through v1beta1, as release 5's clients did.
		task := wrappers.BetaTask(ns, name).Description("kept through the move").ParamDefault("target", "all").
			Step("build", "golang:1.26", "make $(params.target)").Obj()
		run := wrappers.BetaTaskRun(ns, name, name).Param("target", "test").Timeout(time.Hour).Obj()
		for _, o := range []client.Object{task, run} {
			if err := c.client.Create(ctx, o); err != nil {
				return fmt.Errorf("creating %T %s: %w", o, name, err)
			}
		}
		return nil
	})
	created := time.Since(start)
	if got := storedAs(b, c)[minitaskGroup+"/v1beta1"]; got < objects {
		b.Fatalf("%d objects stored as v1beta1 after creating %d", got, objects)
	}
	b.Logf("created %d objects stored as v1beta1 in %v", objects, created.Round(time.Millisecond))
	setClusterStorage(b, c, "v1")
	webhooksOnly.stop()

	before, pids := c.cpu(b, nil)
	start = time.Now()
	m := startManagerWithMetrics(b, c, "--enable-controller=false")
	waitFor(b, 30*time.Minute, "both CRDs' storedVersions to be [v1]", func(ctx context.Context) error {
		for _, name := range crdNames {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			if !slices.Equal(crd.Status.StoredVersions, []string{"v1"}) {
				return fmt.Errorf("%s: storedVersions %v", name, crd.Status.StoredVersions)
			}
		}
		return nil
	})
	took := time.Since(start)
	pids = append(pids, m.cmd.Process.Pid)
	after, _ := c.cpu(b, pids)
	// What the cluster costs idle (node heartbeats, controllers, watches,
	// the manager waiting), which a move that waits (the platform's) pays
	// for longer: taken out of the CPU per object. Measured once the move
	// is done, as before it the API server still digests the creations.
	time.Sleep(idleSample)
	idle, _ := c.cpu(b, pids)
	idlePerSecond := (idle["kube-apiserver"] - after["kube-apiserver"]) / idleSample.Seconds()
	cpustat.Report(b, before, after, "", "kube-apiserver", "etcd", "kube-controller", "manager")
	left := storedAs(b, c)
	if n := left[minitaskGroup+"/v1"]; n < objects || len(left) != 1 {
		b.Errorf("after the move etcd holds %v, want every object as v1", left)
	}
	rewrites := m.metrics(b).Sum("minitask_storage_migration_objects_total", nil)
	if path == "platform" {
		var list svmv1.StorageVersionMigrationList
		if err := c.client.List(ctx, &list); err != nil {
			b.Fatal(err)
		}
		for _, svm := range list.Items {
			b.Logf("StorageVersionMigration %s, created %s after the manager's start: %s", svm.Name,
				svm.CreationTimestamp.Sub(start).Round(time.Second), conditionsOf(svm))
		}
		if len(list.Items) != len(crdNames) || rewrites != 0 {
			b.Errorf("%d StorageVersionMigrations and %v rewrites by the manager, want one per CRD and none", len(list.Items), rewrites)
		}
	} else if rewrites < float64(objects) {
		b.Errorf("the manager rewrote %v objects, want at least %d", rewrites, objects)
	}
	b.Logf("moved %d objects to v1 (%s's path) in %v, %v after the manager's start", objects, path, took.Round(time.Millisecond), took.Round(time.Second))
	b.ReportMetric(float64(objects), "objects")
	b.ReportMetric(took.Seconds(), "move-s")
	b.ReportMetric(float64(objects)/took.Seconds(), "objects/s")
	b.ReportMetric(created.Seconds(), "create-s")
	b.ReportMetric(rewrites, "manager-rewrites")
	overIdle := after["kube-apiserver"] - before["kube-apiserver"] - idlePerSecond*took.Seconds()
	b.Logf("kube-apiserver idle: %.3f CPU-seconds a second; over the move, %.1fs over idle", idlePerSecond, overIdle)
	b.ReportMetric(idlePerSecond, "kube-apiserver-idle-cpu-s/s")
	b.ReportMetric(1000*overIdle/float64(objects), "kube-apiserver-cpu-ms/object")
	b.ReportMetric(0, "ns/op")
}

// setClusterStorage makes version the storage version of both CRDs, as a
// release's CRDs do, and waits until the API server stores new objects in
// it (a probe Task, deleted after).
func setClusterStorage(b *testing.B, c *cluster, version string) {
	b.Helper()
	ctx := context.Background()
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			b.Fatal(err)
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		if err := c.client.Update(ctx, crd); err != nil {
			b.Fatalf("making %s the storage version of %s: %v", version, name, err)
		}
	}
	for i := 0; ; i++ {
		probe := wrappers.BetaTaskRun(ns, fmt.Sprintf("storage-probe-%s-%d", version, i), "none").Obj()
		if err := c.client.Create(ctx, probe); err != nil {
			b.Fatal(err)
		}
		got := storedKey(b, c, "/registry/minitask.dev/taskruns/"+ns+"/"+probe.Name)
		if err := c.client.Delete(ctx, probe, client.GracePeriodSeconds(0), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			b.Fatal(err)
		}
		if got == minitaskGroup+"/"+version {
			return
		}
		if i == 100 {
			b.Fatalf("the API server does not store TaskRuns as %s (%s)", version, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// storedAs counts the minitask objects in the cluster's etcd by the
// apiVersion they are stored in.
func storedAs(b *testing.B, c *cluster) map[string]int {
	b.Helper()
	got := map[string]int{}
	for _, v := range etcdValues(b, c, "/registry/minitask.dev/") {
		got[v]++
	}
	return got
}

// storedKey is the apiVersion etcd holds key in.
func storedKey(b *testing.B, c *cluster, key string) string {
	b.Helper()
	return etcdValues(b, c, key)[key]
}

// etcdValues reads the apiVersion of every key under prefix.
func etcdValues(b *testing.B, c *cluster, prefix string) map[string]string {
	b.Helper()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{c.env["MINITASK_ETCD_ENDPOINT"]}, DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatalf("connecting to etcd: %v", err)
	}
	defer etcd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := etcd.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		b.Fatalf("reading etcd: %v", err)
	}
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			b.Fatalf("decoding etcd key %s: %v", kv.Key, err)
		}
		got[string(kv.Key)] = obj.APIVersion
	}
	return got
}

// cpu reads the CPU time of the cluster's processes (kwokctl's pid files)
// and of extra, and returns the pids it read.
func (c *cluster) cpu(tb testing.TB, extra []int) (cpustat.Seconds, []int) {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(c.env["MINITASK_STATE"], "kwok", "clusters", c.name, "pids", "*.pid"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("finding the pids of cluster %s: %v (%d files)", c.name, err, len(files))
	}
	pids := slices.Clone(extra)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return cpustat.ReadPIDs(tb, pids...), pids
}
