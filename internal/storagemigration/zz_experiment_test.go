package storagemigration_test

// TEMPORARY: diagnostics for the storage-migration benchmark; deleted before hand-off.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

func apiserverGet(t testing.TB, path string, params ...string) []byte {
	cs := kubernetes.NewForConfigOrDie(env.Config)
	r := cs.CoreV1().RESTClient().Get().AbsPath(path).Timeout(5 * time.Minute)
	for i := 0; i+1 < len(params); i += 2 {
		r = r.Param(params[i], params[i+1])
	}
	body, err := r.DoRaw(context.Background())
	if err != nil {
		t.Logf("GET %s: %v", path, err)
	}
	return body
}

func snapshotMetrics(t testing.TB, name string) {
	dir := os.Getenv("SM_DIAG")
	if dir == "" {
		return
	}
	var keep []string
	for _, l := range strings.Split(string(apiserverGet(t, "/metrics")), "\n") {
		if strings.Contains(l, "minitask") || strings.HasPrefix(l, "process_cpu") || strings.HasPrefix(l, "apiserver_flowcontrol_current_inqueue") {
			keep = append(keep, l)
		}
	}
	_ = os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(keep, "\n")), 0o644)
}

func startAPIServerProfile(t testing.TB, seconds string) func() {
	dir := os.Getenv("SM_DIAG")
	if dir == "" {
		return func() {}
	}
	f, _ := os.Create(filepath.Join(dir, "test.pprof"))
	_ = pprof.StartCPUProfile(f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = os.WriteFile(filepath.Join(dir, "apiserver.pprof"), apiserverGet(t, "/debug/pprof/profile", "seconds", seconds), 0o644)
	}()
	return func() { pprof.StopCPUProfile(); f.Close(); <-done }
}

type cpuSnap struct {
	idle, total float64
	procs       map[string]float64
}

func takeCPU() cpuSnap {
	s := cpuSnap{procs: map[string]float64{}}
	b, _ := os.ReadFile("/proc/stat")
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1:]
	for i, x := range f {
		var v float64
		_, _ = fmt.Sscan(x, &v)
		s.total += v
		if i == 3 || i == 4 {
			s.idle += v
		}
	}
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(stat)
		comm := st[strings.Index(st, "(")+1 : strings.LastIndex(st, ")")]
		rest := strings.Fields(st[strings.LastIndex(st, ")")+2:])
		if rest[1] != self && e.Name() != self {
			continue
		}
		var u, sy float64
		_, _ = fmt.Sscan(rest[11], &u)
		_, _ = fmt.Sscan(rest[12], &sy)
		s.procs[comm] += (u + sy) / 100
	}
	return s
}

func logCPU(t testing.TB, a, b cpuSnap, wall time.Duration) {
	busy := (b.total - a.total) - (b.idle - a.idle)
	t.Logf("machine busy %.1f of %.1f cpu-s (%.0f%%)", busy/100, (b.total-a.total)/100, 100*busy/(b.total-a.total))
	for k, v := range b.procs {
		t.Logf("  %s: %.1f cpu-s (%.2f cores)", k, v-a.procs[k], (v-a.procs[k])/wall.Seconds())
	}
}
