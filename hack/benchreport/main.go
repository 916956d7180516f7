// Command benchreport writes docs/benchmarks.md from the output of the
// benchmarks hack/bench.sh runs (`make bench`): a table per benchmark, each
// number held to its goal, and the machine and commands that measured them.
// What follows notesMarker in the existing file is written by people (what
// bounds each number, what was tried) and is kept as it is.
//
//	go run ./hack/benchreport -o docs/benchmarks.md bin/bench/*.txt
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"
)

const notesMarker = "<!-- Everything below this line is written by hand; make bench keeps it. -->"

func main() {
	out := flag.String("o", "docs/benchmarks.md", "the report to write")
	kube := flag.String("kube-version", "", "the Kubernetes version of the API server and the cluster")
	commit := flag.String("commit", "", "the commit measured")
	flag.Parse()
	if err := run(*out, *kube, *commit, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(out, kube, commit string, inputs []string) error {
	if len(inputs) == 0 {
		return errors.New("no benchmark output files given")
	}
	results, cfg, err := readResults(inputs)
	if err != nil {
		return err
	}
	deriveRatios(results)
	notes, err := keptNotes(out)
	if err != nil {
		return err
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`hack/bench.sh`, then `hack/benchreport`) from one run; "+
		"every number is measured, none is edited by hand. See the notes at the end for what bounds each one.\n\n")
	fmt.Fprintf(&b, "- Date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Machine: %d CPUs (%s), %s/%s, %s\n", runtime.NumCPU(), first(cfg["cpu"], "unknown CPU"),
		runtime.GOOS, runtime.GOARCH, memory())
	fmt.Fprintf(&b, "- Go: %s; Kubernetes (kube-apiserver, kwok cluster): %s\n", runtime.Version(), first([]string{kube}, "unknown"))
	if commit != "" {
		fmt.Fprintf(&b, "- Commit: %s\n", commit)
	}
	fmt.Fprintf(&b, "- Commands (`make bench` runs them all):\n\n```sh\n%s\n```\n\n", strings.Join(cfg["command"], "\n"))
	fmt.Fprintf(&b, "## Goals\n\n")
	writeSummary(&b, results)
	fmt.Fprintln(&b)
	for _, s := range sections {
		writeSection(&b, s, results)
	}
	fmt.Fprintf(&b, "%s\n%s", notesMarker, notes)
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// keptNotes returns what follows notesMarker in the current report.
func keptNotes(path string) (string, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	_, notes, _ := strings.Cut(string(old), notesMarker+"\n")
	return notes, nil
}

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
