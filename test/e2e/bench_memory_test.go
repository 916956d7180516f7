//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkControllerMemory measures bin/manager's resident memory with
// 10,000 finished TaskRuns and their Pods on the cluster, runs of a few
// Tasks that use release 3's fields (bench_objects_test.go). They are
// written as the controller leaves them (the run's final status, its Pod),
// by a plain client with the manager's controller off: running 10,000 runs
// through the controller would take this two-core machine several minutes
// for the same end state. Then the manager starts, reconciles each run once
// (finding nothing to do) and settles; its RSS is read from /proc. It
// ignores b.N: run it with -benchtime=1x. BENCH_MEMORY_RUNS sets another
// count of finished runs, for a quick look at a smaller cluster.
func BenchmarkControllerMemory(b *testing.B) {
	const tasks = 20
	finishedRuns := runsFromEnv(b, "BENCH_MEMORY_RUNS", 10000)
	c := newCluster(b, "bench-memory")
	// Writing 10,000 runs that name a ServiceAccount would ask the API server
	// 10,000 SubjectAccessReviews, through a webhook that times out on a busy
	// machine: not what this benchmark measures.
	webhooksOnly := startManager(b, c, "--enable-controller=false", "--serviceaccount-use-check=false")
	create(b, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: benchServiceAccount}})
	var taskList []*v1.Task
	for i := range tasks {
		task := release3Task(fmt.Sprintf("build-%02d", i))
		create(b, c, task)
		taskList = append(taskList, task)
	}
	nodes := &corev1.NodeList{}
	if err := c.client.List(context.Background(), nodes); err != nil || len(nodes.Items) == 0 {
		b.Fatalf("listing the cluster's nodes: %v (%d nodes)", err, len(nodes.Items))
	}
	names := runNames("done", finishedRuns)
	start := time.Now()
	inParallel(b, 2*loadWorkers, names, func(name string) error {
		n := spread(name)
		return createRelease3FinishedRun(c, name, taskList[n%tasks], nodes.Items[n%len(nodes.Items)].Name)
	})
	b.Logf("wrote %d finished runs and their Pods in %v", finishedRuns, time.Since(start).Round(time.Second))
	waitPodsEnded(b, c)
	b.Logf("every Pod has ended, %v after the first was written", time.Since(start).Round(time.Second))
	webhooksOnly.stop()

	if limit := deployedMemoryLimit(b, c); limit != "" {
		b.Setenv("GOMEMLIMIT", limit) // for the manager, which inherits it
		b.Logf("the manager runs with GOMEMLIMIT=%s, as config/manager/manager.yaml deploys it", limit)
	}
	start = time.Now()
	m := startManagerWithMetrics(b, c)
	waitFor(b, 5*time.Minute, "the manager to reconcile every run", func(context.Context) error {
		if n := m.metrics(b).reconciles(); n < float64(finishedRuns) {
			return fmt.Errorf("%v reconciles", n)
		}
		return nil
	})
	synced := time.Since(start)
	// Right after start: the runtime may not have collected since the LISTs
	// that filled the cache, so this holds their garbage too.
	rss := settledRSSMB(b, m)
	// As it runs on: an idle Go program collects at least every 2 minutes.
	// Ask for that collection (through pprof) 30 s later, once start-up's
	// one-off work is done (the time repair reads every run, 500 at a time,
	// without the cache), and let the scavenger give the memory it freed back
	// to the system.
	time.Sleep(30 * time.Second)
	m.collectGarbage(b)
	rssAfterGC := settledRSSMB(b, m)
	heap := m.metrics(b).Sum("go_memstats_heap_inuse_bytes", nil)
	m.saveProfile(b, "heap", fmt.Sprintf("manager-heap-%d-finished-runs", finishedRuns))
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(rssAfterGC, "rss-after-gc-MB")
	b.ReportMetric(peakRSSMB(b, m.cmd.Process.Pid), "peak-rss-MB")
	b.ReportMetric(heap/1e6, "heap-MB")
	b.ReportMetric(synced.Seconds(), "sync-s")
	b.ReportMetric(0, "ns/op")
}

// waitPodsEnded waits until every Pod has ended, as the Pod of a finished
// run has: the manager caches only the Pods that have not ended. kwok,
// playing the kubelet, ends them, unless the benchmark wrote their ended
// status itself (endPod). It asks every 5 s (each ask is a LIST that the API server
// filters), for one Pod that has not ended.
func waitPodsEnded(b *testing.B, c *cluster) {
	b.Helper()
	notEnded := fields.AndSelectors(fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)))
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Second, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods := &metav1.PartialObjectMetadataList{}
		pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		if err := c.client.List(ctx, pods, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: notEnded}, client.Limit(1)); err != nil {
			// A busy API server may time a LIST out; keep polling, and say
			// why if the wait ends.
			last = err.Error()
			return false, nil //nolint:nilerr // the error is kept in last and retried
		}
		if len(pods.Items) > 0 {
			last = "Pod " + pods.Items[0].Name + " has not ended"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		b.Fatalf("waiting for every Pod to end: %v (%s)", err, last)
	}
}

// settledRSSMB is the manager's resident set once it has been idle for 10 s:
// the largest of a few readings.
func settledRSSMB(b *testing.B, m *manager) float64 {
	var rss float64
	for range 5 {
		time.Sleep(2 * time.Second)
		rss = max(rss, rssMB(b, m.cmd.Process.Pid))
	}
	return rss
}

// createFinishedRun writes a TaskRun as the controller leaves a run whose one
// step succeeded: the run, its Pod (bound to node if one is given, so that
// the scheduler has nothing to do), and the run's final status.
func createFinishedRun(c *cluster, name, node string) error {
	return writeFinishedRun(c, wrappers.TaskRun(ns, name, "work").Obj(), node, false)
}

// writeFinishedRun creates run (of Task "work", one step), its Pod bound to
// node, and the final status the controller writes when that step succeeds.
// With endNow, it also writes the Pod's ended status itself (endPod), where
// kwok would otherwise play it.
func writeFinishedRun(c *cluster, run *v1.TaskRun, node string, endNow bool) error {
	ctx := context.Background()
	name := run.Name
	if err := c.client.Create(ctx, run); err != nil {
		return fmt.Errorf("creating TaskRun %s: %w", name, err)
	}
	pod := floorPod(run)
	pod.Spec.NodeName = node
	if err := c.client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating the Pod of %s: %w", name, err)
	}
	now := metav1.Now()
	if endNow {
		ended := client.MergeFrom(pod.DeepCopy())
		endPod(pod, now)
		if err := c.client.Status().Patch(ctx, pod, ended); err != nil {
			return fmt.Errorf("writing the status of the Pod of %s: %w", name, err)
		}
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Status = v1.TaskRunStatus{PodName: pod.Name, StartTime: &now, CompletionTime: &now,
		Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: string(v1.ReasonSucceeded), Message: "every step exited 0", LastTransitionTime: now}},
		Steps: []v1.StepState{{Name: "work", State: v1.StepTerminated, Reason: "Completed",
			ExitCode: ptr.To[int32](0), StartedAt: &now, FinishedAt: &now}}}
	if err := c.client.Status().Patch(ctx, run, patch); err != nil {
		return fmt.Errorf("writing the status of %s: %w", name, err)
	}
	return nil
}

// spread is a number that name picks at random but always the same, to share
// the runs among Tasks and nodes.
func spread(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() >> 1)
}
