package main

import (
	"fmt"
	"io"
)

// summary is one short section of docs/benchmarks.md: a one-row table of
// the few figures that matter, then the section's hand-written notes (what
// is measured, against which floor, why the figure is what it is). The full
// tables are the sections of bin/bench/details.md.
type summary struct {
	id string // names the section's notes (notesMark); never change it without its notes
	// title is numbered as the sections of bin/bench/details.md it sums up
	// (1 for 1 and 1b), which other docs cite by number.
	title   string
	figures []figure
	// requests adds the burst's requests per run by kind, the controller's
	// beside the floor's.
	requests bool
}

// figure is one value of one result: the first result of benchmark base
// whose name has keys (and mode) and that reports unit.
type figure struct {
	label  string
	base   string
	keys   map[string]string
	mode   string
	unit   string
	format func(float64) string
}

func fig(label, base, unit string, format func(float64) string) figure {
	return figure{label: label, base: base, unit: unit, format: format}
}

func (f figure) where(keys map[string]string) figure { f.keys = keys; return f }

// toV1beta1 is a figure of the conversion handler's own result (mode
// "convert", not its floors') for one kind and size, converted to v1beta1:
// the direction of every write and of the slowest cell.
func toV1beta1(label, kind, objects, unit string, format func(float64) string) figure {
	return figure{label: label, base: "ConversionHandler", mode: "convert", unit: unit, format: format,
		keys: map[string]string{"kind": kind, "to": "v1beta1", "objects": objects}}
}

// nodeRun are the keys of one result of BenchmarkNodeStepCost: the node, the
// way the steps ran, their kind and their count.
func nodeRun(pleg, run, step, steps string) map[string]string {
	return map[string]string{"pleg": pleg, "run": run, "step": step, "steps": steps}
}

// sidecarRun are the keys of one result of BenchmarkNodeSidecarCost.
func sidecarRun(pleg, run string) map[string]string {
	return map[string]string{"pleg": pleg, "run": run}
}

// requestKinds are the API requests BenchmarkReconcileBurst counts per run,
// as "<kind>/run" for the controller's burst and "floor-<kind>/run" for the
// floor's, in the order the requests-per-run table shows them.
var requestKinds = []string{
	"taskrun-creates", "pod-creates", "taskrun-status-patches", "event-creates", "taskrun-gets",
	"pod-gets", "namespace-gets", "conversion-reviews", "pod-status-patches", "bindings",
}

// requestColumns are the requests per run as columns of the burst's full
// table in bin/bench/details.md.
func requestColumns() []column {
	var cs []column
	for _, kind := range requestKinds {
		cs = append(cs, column{"per run: " + kind, "", kind + "/run", decimal},
			column{"floor per run: " + kind, "", "floor-" + kind + "/run", decimal})
	}
	return cs
}

var summaries = []summary{
	{id: "conversion", title: "1. Conversion, in process", figures: []figure{
		toV1beta1("1 TaskRun to v1beta1", "TaskRun", "1", "ns/op", millis),
		toV1beta1("its ratio to the floor", "TaskRun", "1", unitRatioToFloor, times),
		toV1beta1("10,000 Tasks to v1beta1", "Task", "10000", "ns/op", millis),
		toV1beta1("its ratio to the floor", "Task", "10000", unitRatioToFloor, times),
		fig("peak heap, 10,000 Tasks", "ConversionPeakHeap", "peak-heap-MB", mb).
			where(map[string]string{"objects": "10000", "order": "api-server"}),
		fig("the same, objects first", "ConversionPeakHeap", "peak-heap-MB", mb).
			where(map[string]string{"objects": "10000", "order": "objects-first"}),
	}},
	{id: "https", title: "2. Conversion over HTTPS", figures: []figure{
		fig("p99, 1 TaskRun", "ConversionHTTPS", "p99-ms", ms).where(map[string]string{"kind": "TaskRun", "to": "v1beta1", "objects": "1"}),
		fig("p99, 1,500 Tasks", "ConversionHTTPS", "p99-ms", ms).where(map[string]string{"kind": "Task", "to": "v1beta1", "objects": "1500"}),
		fig("p99, 10,000 Tasks", "ConversionHTTPS", "p99-ms", ms).where(map[string]string{"kind": "Task", "to": "v1beta1", "objects": "10000"}),
	}},
	{id: "burst", title: "3a. Reconciliation: a burst of 1,000 TaskRuns", requests: true, figures: []figure{
		fig("all Pods", "ReconcileBurst", "all-pods-s", seconds),
		fig("floor: all Pods", "ReconcileBurst", "floor-all-pods-s", seconds),
		fig("ratio", "ReconcileBurst", "pods-vs-floor", times),
		fig("API server CPU", "ReconcileBurst", "api-cpu-s/1000-runs", seconds),
		fig("floor: API server CPU", "ReconcileBurst", "floor-api-cpu-s/1000-runs", seconds),
		fig("ratio", "ReconcileBurst", "api-cpu-vs-floor", times),
		fig("writes per run", "ReconcileBurst", "writes/run", decimal),
	}},
	{id: "sustained", title: "3b. Reconciliation: 20 new TaskRuns a second for 2 minutes", figures: []figure{
		fig("runs", "ReconcileSustained", "runs", count),
		fig("TaskRun to Pod, p50", "ReconcileSustained", "pod-p50-ms", ms),
		fig("p99", "ReconcileSustained", "pod-p99-ms", ms),
		fig("max", "ReconcileSustained", "pod-max-ms", ms),
		fig("API server CPU", "ReconcileSustained", "kube-apiserver-cpu-s", seconds),
		fig("manager CPU", "ReconcileSustained", "manager-cpu-s", seconds),
	}},
	{id: "memory", title: "4. Controller memory", figures: []figure{
		fig("RSS", "ControllerMemory", "rss-MB", mb),
		fig("after a collection", "ControllerMemory", "rss-after-gc-MB", mb),
		fig("peak (start-up)", "ControllerMemory", "peak-rss-MB", mb),
		fig("Go heap in use", "ControllerMemory", "heap-MB", mb),
	}},
	{id: "migration", title: "5. Storage migration", figures: []figure{
		fig("migration", "StorageMigration", "migrate-s", seconds),
		fig("creating the objects", "StorageMigration", "create-s", seconds),
		fig("ratio", "StorageMigration", "migrate-vs-create", times),
		fig("API server CPU per rewrite", "StorageMigration", "kube-apiserver-cpu-ms/object", ms),
		fig("per create", "StorageMigration", "create-kube-apiserver-cpu-ms/object", ms),
		fig("admission passes per rewrite", "StorageMigration", "admission-passes/object", decimal),
		fig("on a cluster, by the platform", "StorageMove", "move-s", seconds).where(map[string]string{"path": "platform"}),
		fig("by the manager", "StorageMove", "move-s", seconds).where(map[string]string{"path": "manager"}),
		fig("API server CPU per object, platform", "StorageMove", "kube-apiserver-cpu-ms/object", ms).where(map[string]string{"path": "platform"}),
		fig("manager", "StorageMove", "kube-apiserver-cpu-ms/object", ms).where(map[string]string{"path": "manager"}),
	}},
	{id: "reads", title: "6. Reads and writes through conversion", figures: []figure{
		fig("LIST 1,500 Tasks, v1alpha1 / v1", "ListThroughConversion", "ratio", times),
		fig("cold LIST 10,000, v1alpha1", "ColdList", "cold-v1alpha1-ms", ms),
		fig("v1 (stored)", "ColdList", "cold-v1-ms", ms),
		fig("ratio", "ColdList", "cold-ratio", times),
		fig("create p99, with reviews", "WriteLatency", "p99-ms", ms).where(map[string]string{"watch-cache": "on", "delay": "0ms"}),
		fig("without", "WriteLatency", "p99-ms", ms).where(map[string]string{"watch-cache": "off"}),
		fig("a start, 10,000 v1 runs, LIST from etcd: reviews, before", "ManagerStart", "reviews", count).
			where(map[string]string{"watch-cache": "off", "repair": "before"}),
		fig("after", "ManagerStart", "reviews", count).where(map[string]string{"watch-cache": "off", "repair": "after"}),
		fig("from the watch cache: cache synced, before", "ManagerStart", "synced-s", seconds).where(map[string]string{"watch-cache": "on", "repair": "before"}),
		fig("after", "ManagerStart", "synced-s", seconds).where(map[string]string{"watch-cache": "on", "repair": "after"}),
	}},
	{id: "ttl", title: "7. Time to live", figures: []figure{
		fig("deletions", "TTLDeletion", "deletions/s", perSecond("runs")),
		fig("all runs deleted", "TTLDeletion", "all-deleted-s", seconds),
		fig("all runs and Pods gone", "TTLDeletion", "all-gone-s", seconds),
		fig("API server CPU", "TTLDeletion", "kube-apiserver-cpu-s", seconds),
		fig("manager CPU", "TTLDeletion", "manager-cpu-s", seconds),
	}},
	{id: "dashboard", title: "8. kubectl task dashboard", figures: []figure{
		fig("first byte p99, 1,000 runs", "Dashboard", "ttfb-1000-p99-ms", ms),
		fig("10,000 runs", "Dashboard", "ttfb-10000-p99-ms", ms),
		fig("RSS, 10,000 runs", "Dashboard", "rss-MB", mb),
		fig("anonymous", "Dashboard", "rss-anon-MB", mb),
		fig("write to page, p99", "Dashboard", "live-p99-ms", ms),
		fig("the write alone, p99", "Dashboard", "write-p99-ms", ms),
	}},
	{id: "node", title: "9. What steps and sidecars cost, on a real node", figures: []figure{
		fig("TaskRun, 10 × `true`", "NodeStepCost", "ms/run", ms).where(nodeRun("generic", "taskrun-chained", "true", "10")),
		fig("over the floor", "NodeStepCost", "over-floor-ms", ms).where(nodeRun("generic", "taskrun-chained", "true", "10")),
		fig("10 × `sleep 0.3`", "NodeStepCost", "ms/run", ms).where(nodeRun("generic", "taskrun-chained", "sleep-0.3", "10")),
		fig("over the floor", "NodeStepCost", "over-floor-ms", ms).where(nodeRun("generic", "taskrun-chained", "sleep-0.3", "10")),
		fig("1 step over the floor", "NodeStepCost", "over-floor-ms", ms).where(nodeRun("generic", "taskrun-chained", "true", "1")),
		fig("Tekton's shape, 10 × `true`", "NodeStepCost", "ms/run", ms).where(nodeRun("generic", "tekton", "true", "10")),
		fig("init containers, bare", "NodeStepCost", "ms/run", ms).where(nodeRun("generic", "init-containers", "true", "10")),
		fig("a step, EventedPLEG", "NodeStepCost", "ms/step", ms).where(nodeRun("evented", "taskrun-chained", "true", "10")),
		fig("a sidecar, over none, EventedPLEG", "NodeSidecarCost", "over-plain-ms", ms).where(sidecarRun("evented", "sidecar")),
		fig("one ignoring SIGTERM: the end after the last step, EventedPLEG", "NodeSidecarCost", "end-ms", ms).
			where(sidecarRun("evented", "stubborn-sidecar")),
	}},
}

// goalsNotes is the id of the notes under the goal table: what holds for
// every figure (the machine, the spread of single runs).
const goalsNotes = "goals"

// noteIDs are the ids of every notes block the report has.
func noteIDs() []string {
	ids := []string{goalsNotes}
	for _, s := range summaries {
		ids = append(ids, s.id)
	}
	return ids
}

func writeSummarySection(w io.Writer, s summary, results []result, notes string) {
	fmt.Fprintf(w, "## %s\n\n", s.title)
	var labels, values []string
	for _, f := range s.figures {
		if v, ok := f.value(results); ok {
			labels, values = append(labels, f.label), append(values, f.format(v))
		}
	}
	if len(values) == 0 {
		fmt.Fprintf(w, "Not measured in this run.\n\n")
	} else {
		writeRow(w, labels)
		writeRow(w, separator(len(labels)))
		writeRow(w, values)
		fmt.Fprintln(w)
	}
	if s.requests {
		writeRequests(w, results)
	}
	writeNotes(w, s.id, notes)
}

func writeNotes(w io.Writer, id, notes string) {
	fmt.Fprintln(w, notesMark(id))
	if notes != "" {
		fmt.Fprintln(w, notes)
	}
	fmt.Fprintln(w)
}

func (f figure) value(results []result) (float64, bool) {
	for _, r := range results {
		if r.matches(f.base, f.keys) && (f.mode == "" || r.hasMode(f.mode)) {
			if v, ok := r.values[f.unit]; ok {
				return v, true
			}
		}
	}
	return 0, false
}

// writeRequests writes the burst's requests per run by kind, a row for each
// kind the run counted.
func writeRequests(w io.Writer, results []result) {
	var rows [][]string
	for _, kind := range requestKinds {
		ours, okOurs := fig("", "ReconcileBurst", kind+"/run", decimal).value(results)
		floor, okFloor := fig("", "ReconcileBurst", "floor-"+kind+"/run", decimal).value(results)
		if okOurs || okFloor {
			rows = append(rows, []string{kind, cell(ours, okOurs), cell(floor, okFloor)})
		}
	}
	if len(rows) == 0 {
		return
	}
	writeRow(w, []string{"requests per run", "controller", "floor"})
	writeRow(w, separator(3))
	for _, r := range rows {
		writeRow(w, r)
	}
	fmt.Fprintln(w)
}

func cell(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return decimal(v)
}
