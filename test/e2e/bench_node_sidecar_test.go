//go:build e2e && e2enode

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// sidecarCase is one Task BenchmarkNodeSidecarCost times: the same steps,
// with or without a sidecar.
type sidecarCase struct {
	// name is the benchmark key's value (run=NAME), and the Task's name.
	name     string
	sidecars []v1.Sidecar
}

// plainCase is the run the sidecar cases are held to.
const plainCase = "plain"

// sidecarCases: no sidecar; one without a probe that exits on SIGTERM at
// once, as a well-behaved service does; and one that ignores SIGTERM, which
// only its grace period's end would stop. The node has no network: the
// sidecars run the steps' image, which it has.
var sidecarCases = []sidecarCase{
	{name: plainCase},
	{name: "sidecar", sidecars: []v1.Sidecar{{Name: "prompt", Image: stepImage,
		Script: "trap 'exit 0' TERM\nsleep 3600 &\nwait"}}},
	{name: "stubborn-sidecar", sidecars: []v1.Sidecar{stubbornSidecar("stubborn")}},
}

// sidecarSteps is the number of steps of every case's Task, each `true`: a
// step that takes no time, so that the run is all hand-over and what a
// sidecar adds is not hidden in the steps' work; more than one, so that a
// sidecar that held the steps back would show between them; and 3, so that
// the plain case is BenchmarkNodeStepCost's taskrun-chained/step=true/steps=3.
const sidecarSteps = 3

// task is the case's Task: sidecarSteps steps of `true` and its sidecars.
func (sc sidecarCase) task() *v1.Task {
	task := stepTask(stepKinds[0], sidecarSteps)
	task.Name = "sidecar-cost-" + sc.name
	task.Spec.Sidecars = sc.sidecars
	return task
}

// BenchmarkNodeSidecarCost times, on a real node, what a sidecar costs a
// run: TaskRuns of the same 3 steps of `true`, with the manager's
// --pod-shape=chained, without a sidecar (plain), with one that has no
// probe and exits on SIGTERM (sidecar), and with one that ignores SIGTERM
// (stubborn-sidecar), one run at a time, from creation until Succeeded was
// seen, split as BenchmarkNodeStepCost splits them (stepClock, the
// sidecars left out), on each node of benchNodes. In each round every case
// takes its turn, the first a different one each round, so that a machine
// whose speed drifts slows them all alike; one untimed warm-up of each
// comes first. It reports per case the medians of BENCH_SIDECAR_RUNS runs
// (5), the p90 of the whole and, for the sidecar cases, how far the whole's
// median is over the plain run's (over-plain-ms: what a sidecar costs a
// run) and how far the median time after the steps is (end-over-plain-ms);
// and the part of the end after the kubelet's report of the last step's
// end was seen (after-report-ms: the controller's), and how far the
// whole's median without the wait for that report is over the plain run's
// (net-over-plain-ms).
//
// Why both nodes: with the kubelet's defaults (pleg=generic) the kubelet
// learns that a container started or ended at its next relist, once a
// second, but for the relist of the Pod it asks for after each sync that
// did something: so it sees a sidecar it has just started running at once,
// with either PLEG, and starts the steps in its next sync; a sidecar's start
// costs the creation and start of its container, which comes before the
// first step's. Every run's end waits for the relist, sidecar or not,
// which moves a run's whole by up to a second with the relist's phase: so
// there, net-over-plain-ms is what a sidecar costs. With EventedPLEG
// (pleg=evented) the runtime's event of a container's end asks for that
// relist at once. It ignores b.N: run it with -benchtime=1x.
func BenchmarkNodeSidecarCost(b *testing.B) {
	skipUnlessRealNode(b)
	runs := runsFromEnv(b, "BENCH_SIDECAR_RUNS", 5)
	for _, node := range benchNodes(b) {
		b.Run("pleg="+node.name, func(b *testing.B) {
			if node.why != "" {
				b.Skip(node.why)
			}
			times := measureSidecarCosts(b, node, runs)
			for _, sc := range sidecarCases {
				b.Run("run="+sc.name, func(b *testing.B) {
					reportSidecarCosts(b, times, sc.name)
				})
			}
		})
	}
}

// measureSidecarCosts creates a cluster on node, starts bin/manager on it
// and times each of sidecarCases runs times, after a warm-up run of each:
// the durations, by case.
func measureSidecarCosts(b *testing.B, node benchNode, runs int) map[string][]runTimes {
	c := newBenchNodeCluster(b, "bench-sidecar-"+node.name, node)
	startManager(b, c, "--pod-shape="+runstate.PodShapeChained)
	w := watchFinished(b, c)
	w.steps = newStepClock(b, c)
	// Once the steps have ended the kubelet stops a Pod's sidecars with the
	// Pod's grace period (30 s), which a shorter one at deletion does not
	// cut: a sidecar that ignores SIGTERM holds its Pod for all of it. The
	// benchmark, done with the Pod, deletes it at once (grace period 0):
	// the kubelet goes on stopping a sidecar that only sleeps, which costs
	// the next run nothing, and a round takes seconds, not half a minute.
	w.deleteGrace = ptr.To[int64](0)
	run := stepCostRun{name: "taskrun-chained", podShape: runstate.PodShapeChained, object: taskRun}
	for _, sc := range sidecarCases {
		create(b, c, sc.task())
	}
	for _, sc := range sidecarCases {
		took := w.time(b, c, run, sc.task(), sc.name+"-warm-up")
		b.Logf("node %s: warm-up %s %dms, its Pod gone %dms after its deletion", node.name, sc.name,
			took.total.Milliseconds(), took.gone.Milliseconds())
	}
	times := map[string][]runTimes{}
	b.Logf("node %s: load average %s at the start", node.name, loadAverage())
	for round := range runs {
		var line []string
		for i := range sidecarCases {
			sc := sidecarCases[(round+i)%len(sidecarCases)]
			took := w.time(b, c, run, sc.task(), fmt.Sprintf("%s-%d", sc.name, round))
			times[sc.name] = append(times[sc.name], took)
			line = append(line, fmt.Sprintf("%s %dms (Pod gone %dms after)", sc.name, took.total.Milliseconds(), took.gone.Milliseconds()))
		}
		b.Logf("node %s, round %d: %s", node.name, round+1, strings.Join(line, ", "))
	}
	b.Logf("node %s: load average %s at the end", node.name, loadAverage())
	return times
}

// reportSidecarCosts reports one case's medians in ms, the p90 of the
// whole, and for a sidecar case how far its whole's median and its end's
// are over the plain run's.
func reportSidecarCosts(b *testing.B, times map[string][]runTimes, name string) {
	part := func(name string, of func(runTimes) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, t := range times[name] {
			ds = append(ds, of(t))
		}
		return ds
	}
	total := func(t runTimes) time.Duration { return t.total }
	end := func(t runTimes) time.Duration { return t.end }
	afterReport := func(t runTimes) time.Duration { return t.afterReport }
	// net is the whole but for the wait for the kubelet's relist to see the
	// last step end: a run's median falls a second apart with its phase.
	net := func(t runTimes) time.Duration { return t.start + t.steps + t.afterReport }
	var each []string
	for _, t := range times[name] {
		each = append(each, fmt.Sprintf("%d (%d+%d+%d, %d after the report)", t.total.Milliseconds(),
			t.start.Milliseconds(), t.steps.Milliseconds(), t.end.Milliseconds(), t.afterReport.Milliseconds()))
	}
	b.Logf("each run, in ms (until the first step, the steps, after them, of which after the kubelet's report): %s",
		strings.Join(each, " "))
	b.ReportMetric(median(part(name, total)), "ms/run")
	b.ReportMetric(percentile(slices.Sorted(slices.Values(part(name, total))), 0.9), "p90-ms")
	b.ReportMetric(median(part(name, func(t runTimes) time.Duration { return t.start })), "start-ms")
	b.ReportMetric(median(part(name, func(t runTimes) time.Duration { return t.steps })), "steps-ms")
	b.ReportMetric(median(part(name, end)), "end-ms")
	if reported := part(name, afterReport); !slices.Contains(reported, 0) {
		b.ReportMetric(median(reported), "after-report-ms")
	}
	if name != plainCase {
		b.ReportMetric(median(part(name, total))-median(part(plainCase, total)), "over-plain-ms")
		b.ReportMetric(median(part(name, end))-median(part(plainCase, end)), "end-over-plain-ms")
		if !slices.Contains(part(name, afterReport), 0) && !slices.Contains(part(plainCase, afterReport), 0) {
			b.ReportMetric(median(part(name, net))-median(part(plainCase, net)), "net-over-plain-ms")
		}
	}
	b.ReportMetric(0, "ns/op")
}
