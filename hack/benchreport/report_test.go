package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const sampleOutput = `command: go test -bench=. ./webhooks/conversion/
cpu: Test CPU
BenchmarkConversionHandler/kind=Task/to=v1alpha1/objects=1500/convert-2   10   120000000 ns/op   400 allocs/op
BenchmarkConversionHandler/kind=Task/to=v1alpha1/objects=1500/floor-2     10   100000000 ns/op   300 allocs/op
BenchmarkConversionHandler/kind=Task/to=v1alpha1/objects=1500/floor-encoding-json-2   10   150000000 ns/op   300 allocs/op
BenchmarkConversionHandler/kind=Task/to=v1beta1/objects=1500/convert-2    10   200000000 ns/op   400 allocs/op
BenchmarkConversionHandler/kind=Task/to=v1beta1/objects=1500/floor-2      10   100000000 ns/op   300 allocs/op
BenchmarkConversionHandler/kind=Task/to=v1beta1/objects=1500/floor-encoding-json-2    10    80000000 ns/op   300 allocs/op
a log line the benchmark printed
BenchmarkConversionHTTPS/kind=Task/to=v1alpha1/objects=1500-2   1   1 ns/op   40 requests   260 p99-ms
BenchmarkReconcileBurst/runs=1000-2   1   1 ns/op   5 writes/run   1 finished-run-writes
BenchmarkReconcileBurst/runs=1000-2   1   1 ns/op   3 writes/run   0 finished-run-writes
BenchmarkReconcileBurst/runs=1000-2   1   1 ns/op   4 writes/run   0 finished-run-writes
BenchmarkTTLDeletion/runs=1000-2    1   1 ns/op   62.5 deletions/s
BenchmarkTTLDeletion/runs=10000-2   1   1 ns/op   45 deletions/s
BenchmarkColdList-2   1   0 ns/op   5200 cold-v1alpha1-ms   2600 cold-v1beta1-ms   2 cold-ratio   1 cold-ratio-per-cache   105 MB
BenchmarkWriteLatency/watch-cache=on/delay=0ms-2    1   5.1 max-ms   2.96 p50-ms   4.55 p99-ms   200 requests   1 reviews/create
BenchmarkWriteLatency/watch-cache=off/delay=0ms-2   1   11.9 max-ms   1.99 p50-ms   7.24 p99-ms   200 requests   0 reviews/create
BenchmarkNodeStepCost/pleg=generic/run=taskrun-chained/step=true/steps=1-2   1   0 ns/op   1990 ms/run   2010 p90-ms   170 start-ms   5 steps-ms   1815 end-ms   40 over-floor-ms   -1000 over-tekton-ms
BenchmarkNodeStepCost/pleg=generic/run=taskrun-chained/step=true/steps=10-2   1   0 ns/op   3010 ms/run   3020 p90-ms   180 start-ms   700 steps-ms   2130 end-ms   1030 over-floor-ms   -6000 over-tekton-ms   77 ms/step   113 run-ms/step
BenchmarkNodeStepCost/pleg=generic/run=taskrun-chained/step=sleep-0.3/steps=10-2   1   0 ns/op   5000 ms/run   5020 p90-ms   180 start-ms   3700 steps-ms   1120 end-ms   990 over-floor-ms   -5500 over-tekton-ms   80 ms/step   111 run-ms/step
BenchmarkNodeStepCost/pleg=evented/run=taskrun-chained/step=true/steps=10-2   1   0 ns/op   1900 ms/run   2100 p90-ms   210 start-ms   960 steps-ms   730 end-ms   102.2 ms/step   102.2 run-ms/step
BenchmarkNodeStepCost/pleg=evented/run=init-containers/step=true/steps=10-2   1   0 ns/op   1500 ms/run   1600 p90-ms   200 start-ms   600 steps-ms   700 end-ms   60 ms/step   80 run-ms/step
BenchmarkNodeSidecarCost/pleg=generic/run=plain-2   1   0 ns/op   2000 ms/run   2050 p90-ms   200 start-ms   300 steps-ms   1500 end-ms   20 after-report-ms
BenchmarkNodeSidecarCost/pleg=generic/run=sidecar-2   1   0 ns/op   2150 ms/run   2300 p90-ms   260 start-ms   310 steps-ms   1580 end-ms   25 after-report-ms   150 over-plain-ms   600 end-over-plain-ms   40 net-over-plain-ms
BenchmarkNodeSidecarCost/pleg=generic/run=stubborn-sidecar-2   1   0 ns/op   2300 ms/run   2400 p90-ms   250 start-ms   300 steps-ms   1750 end-ms   22 after-report-ms   300 over-plain-ms   250 end-over-plain-ms   30 net-over-plain-ms
BenchmarkNodeSidecarCost/pleg=evented/run=plain-2   1   0 ns/op   700 ms/run   720 p90-ms   300 start-ms   250 steps-ms   100 end-ms   18 after-report-ms
BenchmarkNodeSidecarCost/pleg=evented/run=sidecar-2   1   0 ns/op   850 ms/run   900 p90-ms   420 start-ms   260 steps-ms   130 end-ms   30 after-report-ms   150 over-plain-ms   30 end-over-plain-ms   140 net-over-plain-ms
BenchmarkNodeSidecarCost/pleg=evented/run=stubborn-sidecar-2   1   0 ns/op   950 ms/run   990 p90-ms   430 start-ms   280 steps-ms   110 end-ms   20 after-report-ms   250 over-plain-ms   10 end-over-plain-ms   240 net-over-plain-ms
BenchmarkStorageMigration-2   1   2.020 admission-passes/object   0.1874 admission-validate-ms/object   0.1236 match-conditions-ms/object   0 webhook-calls-ms/object   1.000 create-admission-passes/object   4.206 create-admission-validate-ms/object   0 create-etcd-reads/object   1.010 etcd-reads/object   1.000 etcd-writes/object   4.040 create-etcd-cpu-s   3.442 create-kube-apiserver-cpu-ms/object   34.42 create-kube-apiserver-cpu-s   25.03 create-s   1.499 migrate-vs-create   10.86 create-self-cpu-s   5.780 etcd-cpu-s   5.546 kube-apiserver-cpu-ms/object   55.46 kube-apiserver-cpu-s   37.52 migrate-s   266.5 objects/s   11.54 self-cpu-s   0 v1alpha1-left
`

// readSample reads sampleOutput as the report reads its input files.
func readSample(t *testing.T) ([]result, config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte(sampleOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	results, cfg, err := readResults([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	return results, cfg
}

func TestGoalsAreJudgedFromTheWorstResult(t *testing.T) {
	results, cfg := readSample(t)
	if diff := cmp.Diff([]string{"Test CPU"}, cfg.cpus); diff != "" {
		t.Errorf("cpu config (-want +got):\n%s", diff)
	}
	deriveRatios(results)
	var b bytes.Buffer
	writeGoals(&b, results)
	summary := b.String()

	for _, tc := range []struct{ goal, wantRow string }{
		// The ratio is to the faster floor: 200 ms over encoding/json's 80 ms
		// (to v1beta1) is the worst, 2.5x; 120 ms over 100 ms is 1.2x.
		{"conversion handler", "| ratio ≤ 1.5 | 2.50 (kind=Task to=v1beta1 objects=1500) | **missed** |"},
		{"HTTPS p99, 1,500", "| p99-ms < 250 | 260 (kind=Task to=v1alpha1 objects=1500) | **missed** |"},
		{"HTTPS p99, 1 object", "| p99-ms < 5 | not measured | **not measured** |"},
		// A benchmark run three times (-count=3) counts with its median.
		{"API writes per run", "| writes/run ≤ 5 | 4.00 | met |"},
		{"writes to finished runs", "| finished-run-writes ≤ 0 | 0 | met |"},
		// A rate is held to a floor: the lowest result, 45, not 62.5.
		{"10,000 expired runs", "| deletions/s ≥ 50 | 45.0 | **missed** |"},
		// A bound that the value may reach.
		{"cold LIST of 10,000", "| cold-ratio-per-cache ≤ 2 | 1.00 | met |"},
		{"storage migration", "| migrate-vs-create ≤ 2 | 1.50 | met |"},
		// A goal without a result stays in the table.
		{"1,000 runs: the API server's CPU", "| api-cpu-vs-floor ≤ 1.3 | not measured | **not measured** |"},
		// Either kind of step: the worst, `true`'s 1030 ms, not `sleep 0.3`'s 990.
		{"a 10-step TaskRun on a real node", "| over-floor-ms ≤ 1000 | 1030 (step=true steps=10) | **missed** |"},
		{"a 1-step TaskRun on a real node", "| over-floor-ms ≤ 100 | 40.0 (step=true steps=1) | met |"},
		// Every size: the worst is the one least ahead.
		{"a TaskRun on a real node (kubelet defaults) ahead of a Pod of Tekton's shape", "| over-tekton-ms < 0 | -1000 (step=true steps=1) | met |"},
		// Held to the TaskRun's row only: the bare Pod's 60 ms does not count.
		{"a step of a TaskRun on a real node, kubelet with EventedPLEG", "| ms/step < 100 | 102 (step=true steps=10) | **missed** |"},
		// Each sidecar goal is held to its own case's and node's row: the
		// stubborn sidecar's 250 ms over the plain run with EventedPLEG, and
		// the end-ms of 1500 ms and more with the kubelet's defaults, do not
		// count.
		{"a TaskRun with a sidecar (no probe) on a real node (EventedPLEG)", "| over-plain-ms ≤ 200 | 150 | met |"},
		{"a TaskRun with a sidecar (no probe) on a real node (kubelet defaults)", "| net-over-plain-ms ≤ 200 | 40.0 | met |"},
		{"a sidecar ignoring SIGTERM on a real node (EventedPLEG)", "| end-ms ≤ 500 | 110 | met |"},
		{"a sidecar ignoring SIGTERM on a real node (kubelet defaults)", "| after-report-ms ≤ 500 | 22.0 | met |"},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			for _, line := range strings.Split(summary, "\n") {
				if strings.HasPrefix(line, "| "+tc.goal) {
					if !strings.HasSuffix(line, tc.wantRow) {
						t.Errorf("summary row %q, want it to end %q", line, tc.wantRow)
					}
					return
				}
			}
			t.Errorf("no summary row for %q in:\n%s", tc.goal, summary)
		})
	}
}

// sectionTable renders the section of benchmark base from sampleOutput and
// returns its table's lines.
func sectionTable(t *testing.T, base string) []string {
	t.Helper()
	results, _ := readSample(t)
	i := slices.IndexFunc(sections, func(s section) bool { return s.base == base })
	if i < 0 {
		t.Fatalf("no %s section", base)
	}
	var b bytes.Buffer
	writeSection(&b, sections[i], results)
	var rows []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| ") {
			rows = append(rows, line)
		}
	}
	return rows
}

// TestSectionTables checks the two kinds of table: a row per result, its
// keys first (WriteLatency, without a goal; NodeStepCost, its goal on the
// one row it applies to, and a column only some rows have; NodeSidecarCost,
// each goal on its own case's row), and a row per
// measure of one result (the storage migration: its goal beside the time,
// and the CPU seconds of the migration and of the creation it is compared
// with).
func TestSectionTables(t *testing.T) {
	for base, want := range map[string][]string{
		"WriteLatency": {
			"| watch-cache | delay | creates | p50 | p99 | max | reviews per create | goal |",
			"| --- | --- | --- | --- | --- | --- | --- | --- |",
			"| on | 0ms | 200 | 2.96 ms | 4.55 ms | 5.10 ms | 1.00 |  |",
			"| off | 0ms | 200 | 1.99 ms | 7.24 ms | 11.9 ms | 0 |  |",
		},
		"NodeStepCost": {
			"| pleg | run | step | steps | median | p90 | until the first step | the steps | after them | over the floor | over Tekton | a step | a step, from the whole | goal |",
			"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
			"| generic | taskrun-chained | true | 1 | 1990 ms | 2010 ms | 170 ms | 5.00 ms | 1815 ms | 40.0 ms | -1000 ms | — | — | over-floor-ms ≤ 100: met; over-tekton-ms < 0: met |",
			"| generic | taskrun-chained | true | 10 | 3010 ms | 3020 ms | 180 ms | 700 ms | 2130 ms | 1030 ms | -6000 ms | 77.0 ms | 113 ms | over-floor-ms ≤ 1000: **missed**; over-tekton-ms < 0: met |",
			"| generic | taskrun-chained | sleep-0.3 | 10 | 5000 ms | 5020 ms | 180 ms | 3700 ms | 1120 ms | 990 ms | -5500 ms | 80.0 ms | 111 ms | over-floor-ms ≤ 1000: met; over-tekton-ms < 0: met |",
			"| evented | taskrun-chained | true | 10 | 1900 ms | 2100 ms | 210 ms | 960 ms | 730 ms | — | — | 102 ms | 102 ms | ms/step < 100: **missed** |",
			"| evented | init-containers | true | 10 | 1500 ms | 1600 ms | 200 ms | 600 ms | 700 ms | — | — | 60.0 ms | 80.0 ms |  |",
		},
		"NodeSidecarCost": {
			"| pleg | run | median | p90 | until the first step | the steps | after them | after the kubelet's report | over the plain run | after the steps, over the plain run | over the plain run without the relist's wait | goal |",
			"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
			"| generic | plain | 2000 ms | 2050 ms | 200 ms | 300 ms | 1500 ms | 20.0 ms | — | — | — |  |",
			"| generic | sidecar | 2150 ms | 2300 ms | 260 ms | 310 ms | 1580 ms | 25.0 ms | 150 ms | 600 ms | 40.0 ms | net-over-plain-ms ≤ 200: met |",
			"| generic | stubborn-sidecar | 2300 ms | 2400 ms | 250 ms | 300 ms | 1750 ms | 22.0 ms | 300 ms | 250 ms | 30.0 ms | after-report-ms ≤ 500: met |",
			"| evented | plain | 700 ms | 720 ms | 300 ms | 250 ms | 100 ms | 18.0 ms | — | — | — |  |",
			"| evented | sidecar | 850 ms | 900 ms | 420 ms | 260 ms | 130 ms | 30.0 ms | 150 ms | 30.0 ms | 140 ms | over-plain-ms ≤ 200: met |",
			"| evented | stubborn-sidecar | 950 ms | 990 ms | 430 ms | 280 ms | 110 ms | 20.0 ms | 250 ms | 10.0 ms | 240 ms | end-ms ≤ 500: met |",
		},
		"StorageMigration": {
			"| measure | value | goal |",
			"| --- | --- | --- |",
			"| time | 37.5 s |  |",
			"| time / creation's | 1.50x | migrate-vs-create ≤ 2: met |",
			"| rate | 266 objects/s |  |",
			"| left in v1alpha1 | 0 |  |",
			"| CPU: kube-apiserver | 55.5 s |  |",
			"| CPU: kube-apiserver per object | 5.55 ms |  |",
			"| CPU: etcd | 5.78 s |  |",
			"| CPU: webhook and migration | 11.5 s |  |",
			"| API server admission passes per object | 2.02 |  |",
			"| API server admission time per object (validating step) | 0.187 ms |  |",
			"| of which CEL match conditions | 0.124 ms |  |",
			"| of which webhook calls | 0 ms |  |",
			"| etcd reads per object | 1.01 |  |",
			"| etcd writes per object | 1.00 |  |",
			"| reference: creating the objects (16 clients) | 25.0 s |  |",
			"| creation CPU: kube-apiserver | 34.4 s |  |",
			"| creation CPU: kube-apiserver per object | 3.44 ms |  |",
			"| creation CPU: etcd | 4.04 s |  |",
			"| creation CPU: webhook | 10.9 s |  |",
			"| creation: admission passes per object | 1.00 |  |",
			"| creation: etcd reads per object | 0 |  |",
			"| creation: admission time per object | 4.21 ms |  |",
		},
	} {
		t.Run(base, func(t *testing.T) {
			if diff := cmp.Diff(want, sectionTable(t, base)); diff != "" {
				t.Errorf("%s table (-want +got):\n%s", base, diff)
			}
		})
	}
}

func TestGoalBounds(t *testing.T) {
	for name, tc := range map[string]struct {
		g         goal
		value     float64
		wantMet   bool
		wantBound string
	}{
		"a floor, reached":             {goal{limit: 50, atLeast: true}, 50, true, "≥ 50"},
		"a floor, missed":              {goal{limit: 50, atLeast: true}, 49.9, false, "≥ 50"},
		"a strict floor, at it":        {goal{limit: 50, atLeast: true, strict: true}, 50, false, "> 50"},
		"a ceiling, under it":          {goal{limit: 50}, 49.9, true, "≤ 50"},
		"a ceiling, over it":           {goal{limit: 50}, 50.1, false, "≤ 50"},
		"a strict ceiling, at it":      {goal{limit: 50, strict: true}, 50, false, "< 50"},
		"a strict ceiling, just under": {goal{limit: 50, strict: true}, 49.9, true, "< 50"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.g.met(tc.value); got != tc.wantMet {
				t.Errorf("met(%v) = %v, want %v", tc.value, got, tc.wantMet)
			}
			if got := tc.g.bound(); got != tc.wantBound {
				t.Errorf("bound() = %q, want %q", got, tc.wantBound)
			}
		})
	}
}

// TestRatioToFloorTakesThePairedMeasurement: where the handler and the
// codec's floor were measured turn about, their ratio is the one to that
// floor; the ratio to the faster floor is the higher of the two ratios.
func TestRatioToFloorTakesThePairedMeasurement(t *testing.T) {
	const name = "BenchmarkConversionHandler/kind=TaskRun/to=v1beta1/objects=1/"
	for _, tc := range []struct {
		name  string
		lines []string
		want  float64
	}{
		{"no pair: the ratio to the faster floor", []string{
			"convert-2 10 120 ns/op", "floor-2 10 100 ns/op", "floor-encoding-json-2 10 150 ns/op"}, 1.2},
		{"the pair's ratio, not the floor's measured apart", []string{
			"convert-2 10 120 ns/op", "floor-2 10 100 ns/op", "floor-encoding-json-2 10 150 ns/op",
			"paired-2 10 250 ns/op 1.3 ratio"}, 1.3},
		{"the median of the pair's runs", []string{
			"convert-2 10 120 ns/op", "floor-2 10 100 ns/op",
			"paired-2 10 250 ns/op 1.3 ratio", "paired-2 10 250 ns/op 1.6 ratio", "paired-2 10 250 ns/op 1.4 ratio"}, 1.4},
		{"encoding/json's floor faster still", []string{
			"convert-2 10 200 ns/op", "floor-2 10 100 ns/op", "floor-encoding-json-2 10 80 ns/op",
			"paired-2 10 300 ns/op 1.9 ratio"}, 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			for _, line := range tc.lines {
				out.WriteString(name + line + "\n")
			}
			path := filepath.Join(t.TempDir(), "out.txt")
			if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			results, _, err := readResults([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			deriveRatios(results)
			for _, r := range results {
				if r.hasMode("convert") {
					if got := r.values[unitRatioToFloor]; got != tc.want {
						t.Errorf("ratio to the floor %v, want %v", got, tc.want)
					}
					return
				}
			}
			t.Fatal("no convert result")
		})
	}
}

// nodeOutput is the node suite's output since it runs Tasks of two kinds of
// step against the floor and a Pod of Tekton's shape, on the kubelet's defaults.
const nodeOutput = "testdata/node-r7-smoke.txt"

// sidecarOutput is the node suite's output of what a sidecar costs a run.
const sidecarOutput = "testdata/node-sidecar-smoke.txt"

// fullRun are the outputs of a run of every suite: the numbers of the run
// at 01933df, the node suite's of nodeOutput and sidecarOutput, and the
// metrics added since (invented, to fill every goal).
func fullRun(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/run-01933df/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture run: %v", err)
	}
	return append(files, nodeOutput, sidecarOutput, "testdata/added-since-01933df.txt")
}

// render runs benchreport into dir, keeping the notes of the report at
// notes, and returns the report and the details it wrote.
func render(t *testing.T, dir, notes string, inputs []string) (report, details string) {
	t.Helper()
	o := options{out: filepath.Join(dir, "benchmarks.md"), details: filepath.Join(dir, "bench", "details.md"),
		notes: notes, kube: "1.37.1", commit: "abc", date: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	if err := run(o, inputs); err != nil {
		t.Fatal(err)
	}
	return readFile(t, o.out), readFile(t, o.details)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReportIsShort holds docs/benchmarks.md as a full run renders it, with
// the notes committed today, to the 200 lines, every goal measured
// and every section and its notes there; the full tables go to the details.
func TestReportIsShort(t *testing.T) {
	const maxLines = 200
	report, details := render(t, t.TempDir(), "../../docs/benchmarks.md", fullRun(t))
	if n := strings.Count(report, "\n"); n > maxLines {
		t.Errorf("the report has %d lines, more than %d: shorten the notes, or move figures to the details", n, maxLines)
	}
	if strings.Contains(report, "not measured") {
		t.Errorf("a full run leaves a goal or a section not measured:\n%s", report)
	}
	committed := parseNotes(readFile(t, "../../docs/benchmarks.md"))
	for _, id := range noteIDs() {
		if committed[id] == "" {
			t.Errorf("docs/benchmarks.md has no notes for %q", id)
		}
	}
	if diff := cmp.Diff(committed, parseNotes(report)); diff != "" {
		t.Errorf("notes not kept (-committed +rendered):\n%s", diff)
	}
	for _, s := range sections {
		if !strings.Contains(details, "## "+s.title+"\n") {
			t.Errorf("details have no section %q", s.title)
		}
	}
}

// TestNotesAreKept: a render puts each section's notes back under it,
// whatever they held before, and a second render of the same run changes
// nothing; notes the report has no section for are an error, not dropped.
func TestNotesAreKept(t *testing.T) {
	dir := t.TempDir()
	inputs := fullRun(t)
	report, _ := render(t, dir, "", inputs)
	if diff := cmp.Diff(map[string]string{}, nonEmpty(parseNotes(report))); diff != "" {
		t.Errorf("a first report has notes (-want +got):\n%s", diff)
	}
	notes := map[string]string{
		"goals": "Everything shares two cores.",
		"burst": "What bounds the burst.\n\n### In more detail\n\n- the API server's CPU",
	}
	edited := strings.Replace(report, notesMark("goals")+"\n", notesMark("goals")+"\n"+notes["goals"]+"\n", 1)
	edited = strings.Replace(edited, notesMark("burst")+"\n", notesMark("burst")+"\n"+notes["burst"]+"\n", 1)
	edited = strings.Replace(edited, "| 21.4 s |", "| 99.9 s |", 1) // an old number, to be replaced
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _ := render(t, dir, "", inputs)
	if diff := cmp.Diff(notes, nonEmpty(parseNotes(again))); diff != "" {
		t.Errorf("notes after a render (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(strings.Replace(edited, "| 99.9 s |", "| 21.4 s |", 1), again); diff != "" {
		t.Errorf("a second render of the same run changed more than the old number (-edited +rendered):\n%s", diff)
	}
	if third, _ := render(t, dir, "", inputs); third != again {
		t.Errorf("a third render differs from the second")
	}

	orphan := strings.Replace(again, notesMark("burst"), notesMark("renamed"), 1)
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(orphan), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{out: filepath.Join(dir, "benchmarks.md"), details: filepath.Join(dir, "details.md"), date: time.Now()}
	if err := run(o, inputs); err == nil || !strings.Contains(err.Error(), `"renamed"`) {
		t.Errorf("notes of an unknown section: error %v, want one naming it", err)
	}
}

func nonEmpty(notes map[string]string) map[string]string {
	out := map[string]string{}
	for id, n := range notes {
		if n != "" {
			out[id] = n
		}
	}
	return out
}

// TestPartialRun: a run of some suites keeps every goal and section, the
// others "not measured", and takes its notes from the report it names.
func TestPartialRun(t *testing.T) {
	report, details := render(t, t.TempDir(), "../../docs/benchmarks.md", []string{nodeOutput})
	for _, want := range []string{
		"| storage migration of 10,000 objects within 2x the time to create them | migrate-vs-create ≤ 2 | not measured | **not measured** |",
		"| a TaskRun on a real node (kubelet defaults) ahead of a Pod of Tekton's shape, every size | over-tekton-ms < 0 | -1012 (step=true steps=10) | met |",
		"## 5. Storage migration\n\nNot measured in this run.\n\n" + notesMark("migration") + "\n",
		"```sh\ngo test -tags=e2e,e2enode -run=^$ -bench=NodeStepCost -benchtime=1x -timeout=90m ./test/e2e/  # node suite; load average 3.88 5.15 4.09 at its start\n```",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report has no %q:\n%s", want, report)
		}
	}
	if !strings.Contains(details, "Not measured: no BenchmarkStorageMigration results in this run.") {
		t.Errorf("details do not say the migration was not measured:\n%s", details)
	}
}

// TestHeaderLoadAverages: each suite's first command says the load average
// the suite started under, as hack/bench.sh writes it before each command.
func TestHeaderLoadAverages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	out := `command: go test ./a/
loadavg: 0.10 0.20 0.30 before conversion
BenchmarkA-2 1 1 ns/op
command: go test ./b/
loadavg: 0.40 0.50 0.60 before conversion
BenchmarkB-2 1 1 ns/op
command: go test ./c/
loadavg: 1.10 1.20 1.30 before envtest
BenchmarkC-2 1 1 ns/op
`
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	report, _ := render(t, t.TempDir(), "", []string{path})
	want := "```sh\n" +
		"go test ./a/  # conversion suite; load average 0.10 0.20 0.30 at its start\n" +
		"go test ./b/\n" +
		"go test ./c/  # envtest suite; load average 1.10 1.20 1.30 at its start\n```"
	if !strings.Contains(report, want) {
		t.Errorf("report's commands are not\n%s\nin:\n%s", want, report)
	}
}

// TestRequestsPerRun: the burst's requests by kind, the controller's beside
// the floor's, a row only for the kinds the run counted.
func TestRequestsPerRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	out := "BenchmarkReconcileBurst-2 1 2 taskrun-status-patches/run 1 floor-taskrun-status-patches/run 2 pod-gets/run\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	results, _, err := readResults([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeRequests(&b, results)
	want := "| requests per run | controller | floor |\n| --- | --- | --- |\n" +
		"| taskrun-status-patches | 2.00 | 1.00 |\n| pod-gets | 2.00 | — |\n\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("requests per run (-want +got):\n%s", diff)
	}
}
