package timerepair_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/internal/timerepair"
	"github.com/minitask-dev/minitask/webhooks"
)

// BenchmarkManagerStart measures what a manager's start costs with runs
// stored as v1 and storedVersions [v1], as after release 6's migration:
// 10,000 runs (MINITASK_BENCH_START_RUNS sets another number), each made
// as a team writes it, through v1. A start is the controller's cache of
// v1 TaskRuns filling (its options, runcache.Options) while the
// time repair runs beside it, as in the manager, on the same API server.
// On an API server with its watch cache (watch-cache=on) a LIST of runs,
// paged or not, is served from the cache of the version asked for, which
// the API server keeps converted as runs are written; without it
// (watch-cache=off, as for a LIST the cache cannot serve) every page is
// read from etcd and each run converted by the webhook. repair=before is
// the repair as it was, a LIST of every run through
// v1beta1 at each start (Repairer.Repair); repair=after is the manager's
// Repairer.Start, which reads the TaskRun CRD's storedVersions first. Each
// reports the conversion reviews the start cost the webhook (after the
// watch caches have settled; none but the start's are made meanwhile),
// per run, the time until the cache has synced and until both are done,
// and the CPU seconds of kube-apiserver, etcd and this process (the
// webhook, the cache and the repair). It ignores b.N: run it with
// -benchtime=1x. With -short (no API server) it is skipped.
func BenchmarkManagerStart(b *testing.B) {
	if env == nil {
		b.Skip("-short: needs a kube-apiserver and etcd")
	}
	runs := 10000
	if n, err := strconv.Atoi(os.Getenv("MINITASK_BENCH_START_RUNS")); err == nil && n > 0 {
		runs = n
	}
	b.Run(fmt.Sprintf("runs=%d/watch-cache=on", runs), func(b *testing.B) { benchmarkStarts(b, env, runs) })
	b.Run(fmt.Sprintf("runs=%d/watch-cache=off", runs), func(b *testing.B) {
		off := testenv.ForTest(b, webhooks.SetupWithManager, func(e *envtest.Environment) {
			e.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
		})
		benchmarkStarts(b, off, runs)
	})
}

// benchmarkStarts makes runs runs through v1 on env, with storedVersions
// [v1], and measures a start with the repair as it was and as it is.
func benchmarkStarts(b *testing.B, env *testenv.Env, runs int) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // the manager's: API priority and fairness limits it
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	setStoredVersionsOn(b, env, []string{"v1"})
	ns := env.Namespace(b)
	created := time.Now()
	testenv.CreateInParallel(b, c, 16, runs, func(i int) client.Object {
		run := timerepair.BenchRun(b, i)
		fresh := wrappers.TaskRun(ns, run.Name, run.Spec.TaskRef.Name).Obj()
		fresh.Labels, fresh.Spec = run.Labels, run.Spec
		return fresh
	})
	b.Logf("created %d runs through v1 in %v", runs, time.Since(created).Round(time.Millisecond))

	for _, mode := range []string{"before", "after"} {
		b.Run("repair="+mode, func(b *testing.B) {
			repairer := &timerepair.Repairer{Config: cfg, Writer: c, Reader: c}
			repair := func(ctx context.Context) error { return repairer.Start(ctx) }
			if mode == "before" {
				repair = func(ctx context.Context) error { _, err := repairer.Repair(ctx); return err }
			}
			reportStart(b, env, cfg, runs, repair)
		})
	}
}

// reportStart starts a cache of v1 TaskRuns and repair side by side, waits
// for both, and reports what they cost.
func reportStart(b *testing.B, env *testenv.Env, cfg *rest.Config, runs int, repair func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := runcache.Options()
	opts.Scheme = env.Scheme
	runCache, err := cache.New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := runCache.GetInformer(ctx, &v1.TaskRun{}); err != nil {
		b.Fatal(err)
	}
	reviews := settledConversionReviews(b)
	cpu := cpustat.ReadChildren(b)
	start := time.Now()

	var wg sync.WaitGroup
	var synced, repaired time.Duration
	var repairErr error
	wg.Go(func() {
		repairErr = repair(ctx)
		repaired = time.Since(start)
	})
	go func() { _ = runCache.Start(ctx) }()
	if !runCache.WaitForCacheSync(ctx) {
		b.Fatal("the cache of TaskRuns did not sync")
	}
	synced = time.Since(start)
	wg.Wait()
	both := time.Since(start)
	if repairErr != nil {
		b.Fatal(repairErr)
	}
	cpuAfter := cpustat.ReadChildren(b)
	made := settledConversionReviews(b) - reviews

	list := &v1.TaskRunList{}
	if err := runCache.List(ctx, list); err != nil || len(list.Items) < runs {
		b.Fatalf("the synced cache holds %d runs (error %v), want at least %d", len(list.Items), err, runs)
	}
	b.ReportMetric(made, "reviews")
	b.ReportMetric(made/float64(runs), "reviews/run")
	b.ReportMetric(synced.Seconds(), "synced-s")
	b.ReportMetric(repaired.Seconds(), "repair-s")
	b.ReportMetric(both.Seconds(), "start-s")
	cpustat.Report(b, cpu, cpuAfter, "", "kube-apiserver", "etcd", cpustat.Self)
	b.ReportMetric(0, "ns/op")
}
