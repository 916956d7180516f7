//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkTTLDeletion measures how fast the controller deletes finished
// TaskRuns whose time to live has passed: 10,000 finished runs with
// ttlSecondsAfterFinished 1 and their ended Pods, written by a plain client
// with the manager's controller off, as a cluster holds them when the
// manager comes back after a while, or when it is first given
// --default-ttl-after-finished. Then the manager starts, and the clock runs
// until every run is gone. The controller deletes each in the foreground,
// so a run is gone once the garbage collector (kube-controller-manager) has
// deleted its Pod: the figure is the whole deletion, as a user sees it. It
// ignores b.N: run it with -benchtime=1x.
func BenchmarkTTLDeletion(b *testing.B) {
	const expiredRuns = 10000
	c := newCluster(b, "bench-ttl")
	// Until the garbage collector watches TaskRuns, a run deleted in the
	// foreground stays: that wait is the cluster's start-up, not the TTL's.
	webhooksOnly := startManager(b, c, "--enable-controller=false")
	gcWatchesTaskRuns := probeGarbageCollector(b, c)
	create(b, c, wrappers.Task(ns, "work").Step("work", "alpine:3", "echo working").Obj())
	nodes := &corev1.NodeList{}
	if err := c.client.List(context.Background(), nodes); err != nil || len(nodes.Items) == 0 {
		b.Fatalf("listing the cluster's nodes: %v (%d nodes)", err, len(nodes.Items))
	}
	names := runNames("expired", expiredRuns)
	start := time.Now()
	inParallel(b, 2*loadWorkers, names, func(name string) error {
		return createExpiredRun(c, name, nodes.Items[spread(name)%len(nodes.Items)].Name)
	})
	b.Logf("wrote %d finished runs with a TTL of 1 s and their Pods in %v", expiredRuns, time.Since(start).Round(time.Second))
	waitPodsEnded(b, c)
	b.Logf("every Pod has ended, %v after the first was written", time.Since(start).Round(time.Second))
	webhooksOnly.stop()
	gcWatchesTaskRuns()

	cpu := cpustat.Read(b)
	start = time.Now()
	m := startManagerWithMetrics(b, c)
	var allDeleted time.Duration
	waitFor(b, 20*time.Minute, "every expired run to be gone", func(ctx context.Context) error {
		if allDeleted == 0 && m.metrics(b).Sum("minitask_taskruns_deleted_total", nil) >= expiredRuns {
			allDeleted = time.Since(start)
		}
		left, err := countLeft(ctx, c, v1.GroupVersion.WithKind("TaskRunList"))
		if err != nil {
			return err
		}
		if left > 0 {
			return fmt.Errorf("%d TaskRuns left", left)
		}
		return nil
	})
	gone := time.Since(start)
	cpustat.Report(b, cpu, cpustat.Read(b), "", clusterProcesses...)
	pods, err := countLeft(context.Background(), c, corev1.SchemeGroupVersion.WithKind("PodList"))
	if err != nil {
		b.Fatal(err)
	}
	if pods > 0 {
		b.Errorf("every run is gone, but %d Pods are left", pods)
	}
	b.Logf("the manager deleted every run %.1fs after it started; all were gone, with their Pods, %.1fs after", allDeleted.Seconds(), gone.Seconds())
	b.ReportMetric(expiredRuns, "runs")
	b.ReportMetric(expiredRuns/gone.Seconds(), "deletions/s")
	b.ReportMetric(gone.Seconds(), "all-gone-s")
	b.ReportMetric(allDeleted.Seconds(), "all-deleted-s")
	b.ReportMetric(m.metrics(b).reconciles()/expiredRuns, "reconciles/run")
	b.ReportMetric(0, "ns/op")
}

// createExpiredRun writes a finished run of Task work with a TTL of 1 s as
// the controller leaves it: the run, its Pod bound to node, and its final
// status, completed now. A second later its time to live has passed.
func createExpiredRun(c *cluster, name, node string) error {
	run := wrappers.TaskRun(ns, name, "work").Obj()
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](1)
	return writeFinishedRun(c, run, node, true)
}

// countLeft returns how many objects of kind (a list kind) are left in ns:
// one LIST of one object's metadata, which says how many remain, so that
// asking every second costs the API server little while it is measured.
func countLeft(ctx context.Context, c *cluster, kind schema.GroupVersionKind) (int64, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(kind)
	if err := c.client.List(ctx, list, client.InNamespace(ns), client.Limit(1)); err != nil {
		return 0, fmt.Errorf("listing %s: %w", kind.Kind, err)
	}
	return int64(len(list.Items)) + ptr.Deref(list.RemainingItemCount, 0), nil
}
