//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// loadWorkers is how many TaskRuns the benchmarks create at once: a CI
// system starting a batch. The floor writes with the same concurrency.
const loadWorkers = 8

// BenchmarkReconcileBurst creates 1,000 TaskRuns at once on a local kwok
// cluster with bin/manager running, and measures how long until every run
// has its Pod and has Succeeded, each run's TaskRun-to-Pod latency, what the
// burst cost the API server (its CPU, and each kind of request per run), the
// reads past the manager's cache and the reconciles it took. Its floor is a
// plain client making only the writes the design cannot avoid, measured
// before the burst and again after it on the same cluster (which then holds
// 2,000 more runs and Pods, and the API server a larger heap): their mean is
// the floor, so that neither side gains from going first. Every phase is
// measured over the same span of a run's life, from its creation until its
// Pod has ended (the floor's runs are finished from the start; the
// controller's, once they have Succeeded), with the same watchers on the
// cluster, so that the scheduler's and kwok's work for each Pod counts on
// both sides. Finally it restarts the manager, which reconciles every
// finished run again, and counts the runs written after they finished. It
// ignores b.N: run it with -benchtime=1x.
func BenchmarkReconcileBurst(b *testing.B) {
	const burst, warmUp = 1000, 50
	c := newCluster(b, "bench-burst")
	// The floor runs with the manager serving its webhooks (the API server
	// calls the conversion webhook on TaskRun writes too) but without its
	// controller, which would start the floor's runs as well.
	webhooksOnly := startManagerWithMetrics(b, c, "--enable-controller=false")
	create(b, c, floorTask())
	clock := watchRuns(b, c)
	// A few runs first, unmeasured, so that the first phase does not pay
	// alone for what the API server does on a resource's first use.
	warmUpNames := runNames("warm-up", warmUp)
	measureFloor(b, c, clock, warmUpNames)

	floorNames := runNames("floor", burst)
	floorRequests := countRequests(b, c, webhooksOnly)
	floorProfile := profileAPIServer(b, c, "burst-floor-apiserver-cpu", 15)
	floorBefore := measureFloor(b, c, clock, floorNames)
	reportRequestsPerRun(b, floorRequests, countRequests(b, c, webhooksOnly), burst, "floor-")
	floorProfile()
	webhooksOnly.stop()

	m := startManagerWithMetrics(b, c, strings.Fields(os.Getenv("BENCH_MANAGER_ARGS"))...)
	// The manager first reconciles the floor's finished runs: let it, so
	// that what follows counts the burst alone.
	waitFor(b, 2*time.Minute, "the manager to reconcile the floor's runs", func(context.Context) error {
		if n := m.metrics(b).reconciles(); n < burst+warmUp {
			return fmt.Errorf("%v reconciles", n)
		}
		return nil
	})
	before := countRequests(b, c, m)

	names := runNames("burst", burst)
	burstProfile := profileAPIServer(b, c, "burst-apiserver-cpu", 15)
	cpu := cpustat.Read(b)
	start := time.Now()
	inParallel(b, loadWorkers, names, func(name string) error { return clock.createRun(context.Background(), c, name) })
	created := time.Since(start)
	allPods := clock.waitAll(b, clock.podSeen, names, 5*time.Minute, "every run's Pod").Sub(start)
	allSucceeded := clock.waitAll(b, clock.finished, names, 5*time.Minute, "every run to finish").Sub(start)
	clock.waitAll(b, clock.podEnded, names, time.Minute, "every run's Pod to end")
	burstCPU := settledCPU(b)
	after := countRequests(b, c, m)
	cpustat.Report(b, cpu, burstCPU, "", clusterProcesses...)
	reportRequestsPerRun(b, before, after, burst, "")
	apiCPU := burstCPU[apiServerProcess] - cpu[apiServerProcess]
	burstProfile()

	m.stop()
	webhooksOnly.start()
	floor2Names := runNames("floor2", burst)
	floorAfter := measureFloor(b, c, clock, floor2Names)
	webhooksOnly.stop()
	floor := floorBefore.meanWith(floorAfter)
	floorAPICPU := floor.cpu[apiServerProcess]
	cpustat.Report(b, cpustat.Seconds{}, floor.cpu, "floor-", clusterProcesses...)

	all, err := runs(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range names {
		if got := outcome(all[name]); got != "True/Succeeded" {
			b.Fatalf("run %s ended %s, want True/Succeeded", name, got)
		}
	}
	latencies := clock.podLatencies(names)
	runAndPodWrites := after.api.runAndPodWrites() - before.api.runAndPodWrites()
	managerWrites := after.manager.writes() - before.manager.writes()

	b.ReportMetric(created.Seconds(), "create-s")
	b.ReportMetric(allPods.Seconds(), "all-pods-s")
	b.ReportMetric(floor.allPods.Seconds(), "floor-all-pods-s")
	b.ReportMetric(floorBefore.allPods.Seconds(), "floor-before-all-pods-s")
	b.ReportMetric(floorAfter.allPods.Seconds(), "floor-after-all-pods-s")
	b.ReportMetric(allPods.Seconds()/floor.allPods.Seconds(), "pods-vs-floor")
	b.ReportMetric(allSucceeded.Seconds(), "all-succeeded-s")
	b.ReportMetric(apiCPU*1000/burst, "api-cpu-s/1000-runs")
	b.ReportMetric(floorAPICPU*1000/burst, "floor-api-cpu-s/1000-runs")
	b.ReportMetric(floorBefore.cpu[apiServerProcess]*1000/burst, "floor-before-api-cpu-s/1000-runs")
	b.ReportMetric(floorAfter.cpu[apiServerProcess]*1000/burst, "floor-after-api-cpu-s/1000-runs")
	b.ReportMetric(apiCPU/floorAPICPU, "api-cpu-vs-floor")
	b.ReportMetric(percentile(latencies, 0.50), "pod-p50-ms")
	b.ReportMetric(percentile(latencies, 0.99), "pod-p99-ms")
	b.ReportMetric(runAndPodWrites/burst, "writes/run")
	b.ReportMetric((managerWrites-runAndPodWrites)/burst, "event-writes/run")
	b.ReportMetric((after.api.liveReads()-before.api.liveReads())/burst, "live-reads/run")
	b.ReportMetric((after.manager.reconciles()-before.manager.reconciles())/burst, "reconciles/run")
	finishedNames := slices.Concat(names, warmUpNames, floorNames, floor2Names)
	b.ReportMetric(float64(writesAfterFinish(b, c, m, finishedNames)), "finished-run-writes")
	b.ReportMetric(0, "ns/op")
}

// apiServerProcess is kube-apiserver's command name, as cpustat reads it.
const apiServerProcess = "kube-apiserver"

// settleTime is how long a phase's CPU reading waits after its last run was
// seen where it waited for: what follows a run's last write at once (an
// Event the recorder sends after the status patch, the watch events of the
// last writes) counts in its phase, on both sides alike.
const settleTime = 2 * time.Second

// settledCPU reads the CPU seconds of the machine's processes once the
// writes that follow a phase's end have been served.
func settledCPU(b *testing.B) cpustat.Seconds {
	b.Helper()
	time.Sleep(settleTime)
	return cpustat.Read(b)
}

// floorPhase is what one measurement of the floor found: how long until
// every Pod existed, and the CPU seconds each process used until every Pod
// had ended.
type floorPhase struct {
	allPods time.Duration
	cpu     cpustat.Seconds
}

// meanWith is the mean of two measurements of the floor.
func (f floorPhase) meanWith(g floorPhase) floorPhase {
	mean := floorPhase{allPods: (f.allPods + g.allPods) / 2, cpu: cpustat.Seconds{}}
	for name := range f.cpu {
		mean.cpu[name] = (f.cpu[name] + g.cpu[name]) / 2
	}
	return mean
}

// measureFloor makes, with a plain client and loadWorkers at once, the
// writes no design can avoid for each run (createFinishedRun): create the
// TaskRun, create its Pod, and write its status once. The status written is
// final, so that the manager, started later, has nothing to do for these
// runs. It returns how long until every Pod existed, and the CPU the
// machine's processes used until every Pod had ended (and settleTime more).
func measureFloor(b *testing.B, c *cluster, clock *runClock, names []string) floorPhase {
	b.Helper()
	before := cpustat.Read(b)
	start := time.Now()
	inParallel(b, loadWorkers, names, func(name string) error { return createFinishedRun(c, name, "") })
	took := time.Since(start)
	clock.waitAll(b, clock.podEnded, names, 5*time.Minute, "every floor run's Pod to end")
	after := settledCPU(b)
	used := cpustat.Seconds{}
	for name, s := range after {
		used[name] = s - before[name]
	}
	b.Logf("floor: %d runs, their Pods and one status write each in %v; the API server's CPU until every Pod ended: %.1fs",
		len(names), took, used[apiServerProcess])
	return floorPhase{allPods: took, cpu: used}
}

// floorTask is the Task that the floor's runs and the burst's runs both
// name: one script step.
func floorTask() *v1.Task {
	return wrappers.Task(ns, "work").Step("work", "alpine:3", "true").Obj()
}

// floorPod is the Pod the controller creates for run of floorTask, so that
// the floor writes the same bytes the controller does. It mirrors, for a
// Task of one script step without results or workspaces, in a namespace
// that does not enforce the restricted level: runpod.Build and podAnnotations
// (internal/runpod/build.go: the run's labels and runstate.PodLabels, the
// script-steps annotation, the wrapped command from internal/stepscript, no
// ServiceAccount token, activeDeadlineSeconds of the run's timeout, counted
// from the Pod's creation), resultsVolumes and resultsMounts
// (internal/runpod/volumes.go: none without results) and the controller
// reference createPod sets (controllers/stage_create.go).
func floorPod(run *v1.TaskRun) *corev1.Pod {
	task := floorTask()
	step := task.Spec.Steps[0]
	container := runstate.StepContainer(step.Name)
	scriptSteps, _ := runstate.NamesAnnotation([]string{container})
	labels := maps.Clone(run.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, runstate.PodLabels(run))
	now := time.Now()
	deadline := runstate.DeadlineFor(now, runstate.Timeout(run, runstate.DefaultTimeout))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: runstate.PodName(run), Namespace: run.Namespace, Labels: labels,
			Annotations: map[string]string{runstate.AnnotationScriptSteps: scriptSteps},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "TaskRun",
				Name: run.Name, UID: run.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: container, Image: step.Image,
				Command: stepscript.Command(step.Script, step.OnError, stepscript.Timer{}, stepscript.ProtocolFor(task))}},
			ActiveDeadlineSeconds:        deadline.ActiveDeadlineSeconds(now),
			AutomountServiceAccountToken: ptr.To(false),
		},
	}
}

// writesAfterFinish counts the named runs, all finished, that are written
// again: it records their resourceVersions, (re)starts the manager (which
// reconciles every run anew) and compares once it has.
func writesAfterFinish(b *testing.B, c *cluster, m *manager, names []string) int {
	b.Helper()
	before, err := runs(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	if m.running() {
		m.stop()
	}
	m.start()
	waitFor(b, 2*time.Minute, "the restarted manager to reconcile every run", func(context.Context) error {
		if n := m.metrics(b).reconciles(); n < float64(len(names)) {
			return fmt.Errorf("%v reconciles of %d runs", n, len(names))
		}
		return nil
	})
	time.Sleep(2 * time.Second) // a write would follow its reconcile at once
	after, err := runs(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	written := 0
	for _, name := range names {
		if after[name].ResourceVersion != before[name].ResourceVersion {
			written++
			b.Logf("finished run %s was written again: %s", name, outcome(after[name]))
		}
	}
	return written
}
