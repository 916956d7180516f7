//go:build e2e

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkReconcileSustained creates 20 TaskRuns per second for 2 minutes
// on a local kwok cluster with bin/manager running, each on its tick
// whatever the others do, and reports the TaskRun-to-Pod latencies. It
// ignores b.N: run it with -benchtime=1x.
func BenchmarkReconcileSustained(b *testing.B) {
	const rate, duration = 20, 2 * time.Minute
	c := newCluster(b, "bench-sustained")
	m := startManagerWithMetrics(b, c)
	create(b, c, wrappers.Task(ns, "work").Step("work", "alpine:3", "true").Obj())
	clock := watchRuns(b, c)

	names := runNames("steady", int(rate*duration/time.Second))
	ticker := time.NewTicker(time.Second / rate)
	defer ticker.Stop()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	cpu := cpustat.Read(b)
	for _, name := range names {
		<-ticker.C
		wg.Go(func() {
			if err := clock.createRun(context.Background(), c, name); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	clock.waitAll(b, clock.podSeen, names, time.Minute, "every run's Pod")
	cpustat.Report(b, cpu, cpustat.Read(b), "", clusterProcesses...)
	latencies := clock.podLatencies(names)
	b.ReportMetric(float64(len(names)), "runs")
	b.ReportMetric(percentile(latencies, 0.50), "pod-p50-ms")
	b.ReportMetric(percentile(latencies, 0.99), "pod-p99-ms")
	b.ReportMetric(percentile(latencies, 1), "pod-max-ms")
	b.ReportMetric(m.metrics(b).reconciles()/float64(len(names)), "reconciles/run")
	b.ReportMetric(0, "ns/op")
}
