// Command benchreport writes docs/benchmarks.md from the output of the
// benchmarks hack/bench.sh runs (`make bench`): one table of every goal and
// the figure of this run that meets or misses it, then a short section per
// suite, its few key figures and its hand-written notes (notes.go), which
// every render keeps. The full tables, every size and every measure, go to
// a second file, bin/bench/details.md, which is not committed: a report a
// user reads, and the detail for whoever runs the benchmarks.
//
//	go run ./hack/benchreport -o docs/benchmarks.md -details bin/bench/details.md bin/bench/*.txt
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// options are benchreport's flags.
type options struct {
	out, details, notes string
	kube, commit        string
	date                time.Time // when the report is written
}

func main() {
	var o options
	flag.StringVar(&o.out, "o", "docs/benchmarks.md", "the report to write")
	flag.StringVar(&o.details, "details", "bin/bench/details.md", "the file to write the full tables to")
	flag.StringVar(&o.notes, "notes", "", "the report whose hand-written notes to keep (default: the one -o names)")
	flag.StringVar(&o.kube, "kube-version", "", "the Kubernetes version of the API server and the cluster")
	flag.StringVar(&o.commit, "commit", "", "the commit measured")
	flag.Parse()
	o.date = time.Now()
	if err := run(o, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(o options, inputs []string) error {
	if len(inputs) == 0 {
		return errors.New("no benchmark output files given")
	}
	results, cfg, err := readResults(inputs)
	if err != nil {
		return err
	}
	deriveRatios(results)
	if o.notes == "" {
		o.notes = o.out
	}
	notes, err := keptNotes(o.notes, noteIDs())
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`hack/bench.sh`, then `hack/benchreport`) from one run: every number "+
		"is measured, none is edited by hand; only the notes under each section are written by hand. "+
		"The full tables (every size, every measure) are in `%s`, which the same run writes and git does not keep.\n\n",
		o.details)
	writeHeader(&b, cfg, o)
	fmt.Fprintf(&b, "## Goals\n\n")
	writeGoals(&b, results)
	fmt.Fprintln(&b)
	writeNotes(&b, goalsNotes, notes[goalsNotes])
	for _, s := range summaries {
		writeSummarySection(&b, s, results, notes[s.id])
	}
	if err := os.WriteFile(o.out, trimEnd(b.Bytes()), 0o644); err != nil {
		return err
	}

	b.Reset()
	fmt.Fprintf(&b, "# Benchmarks: the full tables\n\n")
	fmt.Fprintf(&b, "Every measure of the run that wrote %s, by `make bench`; not committed.\n\n", o.out)
	writeHeader(&b, cfg, o)
	for _, s := range sections {
		writeSection(&b, s, results)
	}
	if err := os.MkdirAll(filepath.Dir(o.details), 0o755); err != nil {
		return err
	}
	return os.WriteFile(o.details, trimEnd(b.Bytes()), 0o644)
}

// writeHeader says where and how the numbers were measured: the machine,
// the versions, the commit, and each command with the load average its
// suite started under (hack/bench.sh's "loadavg", "LOAD before SUITE").
func writeHeader(w io.Writer, cfg config, o options) {
	fmt.Fprintf(w, "- Date: %s\n", o.date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- Machine: %d CPUs (%s), %s/%s, %s\n", runtime.NumCPU(), first(cfg.cpus, "unknown CPU"),
		runtime.GOOS, runtime.GOARCH, memory())
	fmt.Fprintf(w, "- Go: %s; Kubernetes (kube-apiserver, kwok cluster): %s\n", runtime.Version(), first([]string{o.kube}, "unknown"))
	if o.commit != "" {
		fmt.Fprintf(w, "- Commit: %s\n", o.commit)
	}
	fmt.Fprintf(w, "- Commands (`make bench` runs them all; `hack/bench.sh SUITE...` some, into bin/bench/benchmarks.md):\n\n```sh\n")
	suite := ""
	for _, c := range cfg.commands {
		load, s, ok := strings.Cut(c.loadavg, " before ")
		if ok && s != suite {
			suite = s
			fmt.Fprintf(w, "%s  # %s suite; load average %s at its start\n", c.line, s, load)
			continue
		}
		fmt.Fprintln(w, c.line)
	}
	fmt.Fprintf(w, "```\n\n")
}

func trimEnd(b []byte) []byte { return append(bytes.TrimRight(b, "\n"), '\n') }

func first(values []string, otherwise string) string {
	if len(values) == 0 || values[0] == "" {
		return otherwise
	}
	return values[0]
}

// memory is the machine's memory as /proc/meminfo tells it.
func memory() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	var kb int
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.0f GB memory", float64(kb)/(1<<20))
		}
	}
	return "memory unknown"
}
