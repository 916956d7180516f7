// Package cpustat reads from /proc the CPU time that processes on this
// machine have used, by command name. Benchmarks run on a shared machine,
// where kube-apiserver, etcd, a cluster's controllers and the code measured
// take turns on the same few cores: they report where the CPU went, so that
// a time can be read as bound by one process's CPU (the API server's, say)
// rather than by the code under test.
package cpustat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// clockTicks is USER_HZ on Linux, the unit of /proc/PID/stat's times.
const clockTicks = 100

// Seconds is the CPU time, user and system, that processes have used so far,
// in seconds by command name: the kernel's comm, the first 15 bytes of the
// executable's name ("kube-controller" for kube-controller-manager).
// Processes with the same name add up.
type Seconds map[string]float64

// Read reads the CPU time of every process on the machine.
func Read(tb testing.TB) Seconds {
	tb.Helper()
	return read(tb, func(p process) (string, bool) { return p.comm, true })
}

// Self is the name ReadChildren gives this process (a test binary's comm is
// its package's name, cut to 15 bytes).
const Self = "self"

// ReadChildren reads the CPU time of this process, as Self, and of the
// processes it started, such as envtest's kube-apiserver and etcd; not that
// of others by the same names that other programs on the machine run.
func ReadChildren(tb testing.TB) Seconds {
	tb.Helper()
	self := os.Getpid()
	return read(tb, func(p process) (string, bool) {
		if p.pid == self {
			return Self, true
		}
		return p.comm, p.ppid == self
	})
}

// ReadPIDs reads the CPU time of the processes pids, by command name: those
// of one local cluster, say, and not the same programs' of another cluster
// on the same machine. A pid that has exited is left out.
func ReadPIDs(tb testing.TB, pids ...int) Seconds {
	tb.Helper()
	return read(tb, func(p process) (string, bool) { return p.comm, slices.Contains(pids, p.pid) })
}

// read adds up the CPU time of the processes that name names, under that
// name.
func read(tb testing.TB, name func(process) (string, bool)) Seconds {
	tb.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		tb.Fatalf("listing processes: %v", err)
	}
	used := Seconds{}
	for _, path := range paths {
		stat, err := os.ReadFile(path)
		if err != nil {
			continue // the process has exited
		}
		p, ok := parseStat(stat)
		if !ok {
			continue
		}
		if n, ok := name(p); ok {
			used[n] += p.cpu
		}
	}
	return used
}

// process is what Read takes from one /proc/PID/stat.
type process struct {
	pid  int
	comm string
	ppid int
	cpu  float64 // seconds, user and system
}

// parseStat parses "pid (comm) state ppid ... utime stime ...". comm may
// hold spaces and parentheses, so the fields are split after the last ")".
func parseStat(stat []byte) (process, bool) {
	open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || closing < open {
		return process{}, false
	}
	fields := strings.Fields(string(stat[closing+1:]))
	if len(fields) < 13 {
		return process{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(stat[:open])))
	if err != nil {
		return process{}, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return process{}, false
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return process{}, false
	}
	return process{pid: pid, comm: string(stat[open+1 : closing]), ppid: ppid, cpu: (utime + stime) / clockTicks}, true
}

// Report reports the CPU seconds that each of names used between two
// readings as "<prefix><name>-cpu-s", and logs every process that used half
// a second or more, named or not.
func Report(b *testing.B, before, after Seconds, prefix string, names ...string) {
	b.Helper()
	var busy []string
	for name, s := range after {
		if d := s - before[name]; d >= 0.5 {
			busy = append(busy, fmt.Sprintf("%s %.1fs", name, d))
		}
	}
	b.Logf("%sCPU used: %s", prefix, strings.Join(busy, ", "))
	for _, name := range names {
		b.ReportMetric(after[name]-before[name], prefix+name+"-cpu-s")
	}
}
