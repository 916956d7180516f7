package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
BenchmarkColdList-2   1   0 ns/op   5200 cold-v1alpha1-ms   2600 cold-v1beta1-ms   2 cold-ratio   105 MB
BenchmarkWriteLatency/watch-cache=on/delay=0ms-2    1   5.1 max-ms   2.96 p50-ms   4.55 p99-ms   200 requests   1 reviews/create
BenchmarkWriteLatency/watch-cache=off/delay=0ms-2   1   11.9 max-ms   1.99 p50-ms   7.24 p99-ms   200 requests   0 reviews/create
BenchmarkNodeStepCost/pleg=evented/run=taskrun/steps=1-2    1   0 ns/op   980 ms/run   1050 p90-ms   200 start-ms   40 steps-ms   740 end-ms
BenchmarkNodeStepCost/pleg=evented/run=taskrun/steps=10-2   1   0 ns/op   1900 ms/run   2100 p90-ms   210 start-ms   960 steps-ms   730 end-ms   102.2 ms/step   102.2 run-ms/step
BenchmarkNodeStepCost/pleg=evented/run=chained/steps=10-2   1   0 ns/op   1500 ms/run   1600 p90-ms   200 start-ms   600 steps-ms   700 end-ms   60 ms/step   80 run-ms/step
BenchmarkStorageMigration-2   1   2.020 admission-passes/object   0.1874 admission-validate-ms/object   0.1236 match-conditions-ms/object   0 webhook-calls-ms/object   1.000 create-admission-passes/object   4.206 create-admission-validate-ms/object   0 create-etcd-reads/object   1.010 etcd-reads/object   1.000 etcd-writes/object   4.040 create-etcd-cpu-s   3.442 create-kube-apiserver-cpu-ms/object   34.42 create-kube-apiserver-cpu-s   25.03 create-s   10.86 create-self-cpu-s   5.780 etcd-cpu-s   5.546 kube-apiserver-cpu-ms/object   55.46 kube-apiserver-cpu-s   37.52 migrate-s   266.5 objects/s   11.54 self-cpu-s   0 v1alpha1-left
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
	if diff := cmp.Diff([]string{"Test CPU"}, cfg["cpu"]); diff != "" {
		t.Errorf("cpu config (-want +got):\n%s", diff)
	}
	deriveRatios(results)
	var b bytes.Buffer
	writeSummary(&b, results)
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
		{"cold LIST of 10,000", "| cold-ratio ≤ 2 | 2.00 | met |"},
		{"storage migration", "| migrate-s < 30 | 37.5 | **missed** |"},
		// Held to the TaskRun's row only: the chained Pod's 60 ms does not count.
		{"a step of a TaskRun on a real node, kubelet with EventedPLEG", "| ms/step < 100 | 102 | **missed** |"},
		{"a step of a TaskRun on a real node, the kubelet's defaults", "| ms/step < 1200 | not measured | **not measured** |"},
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
// one row it applies to, and a column only some rows have), and a row per
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
			"| pleg | run | steps | median | p90 | until the first step | the steps | after them | a step | a step, from the whole | goal |",
			"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
			"| evented | taskrun | 1 | 980 ms | 1050 ms | 200 ms | 40.0 ms | 740 ms | — | — |  |",
			"| evented | taskrun | 10 | 1900 ms | 2100 ms | 210 ms | 960 ms | 730 ms | 102 ms | 102 ms | ms/step < 100: **missed** |",
			"| evented | chained | 10 | 1500 ms | 1600 ms | 200 ms | 600 ms | 700 ms | 60.0 ms | 80.0 ms |  |",
		},
		"StorageMigration": {
			"| measure | value | goal |",
			"| --- | --- | --- |",
			"| time | 37.5 s | migrate-s < 30: **missed** |",
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

func TestNotesAfterTheMarkerAreKept(t *testing.T) {
	dir := t.TempDir()
	input, report := filepath.Join(dir, "out.txt"), filepath.Join(dir, "report.md")
	if err := os.WriteFile(input, []byte(sampleOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := "## Notes\n\nWhat bounds the HTTPS p99.\n"
	if err := os.WriteFile(report, []byte("# old numbers\n"+notesMarker+"\n"+notes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(report, "1.37.1", "abc", []string{input}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "old numbers") || !strings.HasSuffix(string(got), notesMarker+"\n"+notes) {
		t.Errorf("report does not end with the marker and the notes, or keeps the old numbers:\n%s", got)
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
