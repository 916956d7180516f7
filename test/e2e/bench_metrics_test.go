//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/minitask-dev/minitask/internal/testing/promscrape"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// This file reads the numbers the benchmarks report from where they are
// kept: Prometheus metrics (the manager's and the API server's) and /proc.

// metricFamilies is one scrape of a Prometheus endpoint, with what the
// benchmarks read of it.
type metricFamilies struct{ promscrape.Families }

// managerMetrics scrapes the manager's metrics endpoint, served over plain
// HTTP on loopback when it runs with metricsArgs.
func (m *manager) metrics(tb testing.TB) metricFamilies {
	tb.Helper()
	resp, err := http.Get("http://" + m.metricsAddr + "/metrics")
	if err != nil {
		tb.Fatalf("scraping the manager's metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("scraping the manager's metrics: HTTP %d, %v", resp.StatusCode, err)
	}
	return metricFamilies{promscrape.Parse(tb, body)}
}

// startManagerWithMetrics starts the manager as startManager does, with its
// metrics served over plain HTTP on a free loopback port for the benchmarks
// to scrape.
func startManagerWithMetrics(tb testing.TB, c *cluster, extraArgs ...string) *manager {
	tb.Helper()
	addr, pprof := testenv.FreeAddr(tb), testenv.FreeAddr(tb)
	m := startManager(tb, c, append([]string{"--metrics-bind-address=" + addr, "--metrics-secure=false",
		"--pprof-bind-address=" + pprof}, extraArgs...)...)
	m.metricsAddr, m.pprofAddr = addr, pprof
	return m
}

// saveProfile writes the manager's profile (heap, say) to
// $BENCH_PROFILE_DIR/<name>.pprof when that is set, for `go tool pprof`.
func (m *manager) saveProfile(tb testing.TB, profile, name string) {
	tb.Helper()
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	resp, err := http.Get("http://" + m.pprofAddr + "/debug/pprof/" + profile)
	if err != nil {
		tb.Fatalf("fetching the manager's %s profile: %v", profile, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, name+".pprof")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("wrote the manager's %s profile to %s", profile, path)
}

// collectGarbage makes the manager collect its garbage now: pprof's heap
// profile does, when asked with gc=1.
func (m *manager) collectGarbage(tb testing.TB) {
	tb.Helper()
	resp, err := http.Get("http://" + m.pprofAddr + "/debug/pprof/heap?gc=1")
	if err != nil {
		tb.Fatalf("making the manager collect its garbage: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("making the manager collect its garbage: HTTP %d, %v", resp.StatusCode, err)
	}
}

// reconciles is how many times the manager's TaskRun controller has
// reconciled since it started, whatever the result.
func (f metricFamilies) reconciles() float64 {
	return f.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "taskrun"})
}

// conversions is how many conversion requests the manager's webhook server
// has answered since it started.
func (f metricFamilies) conversions() float64 {
	return f.Sum("controller_runtime_webhook_requests_total", map[string]string{"webhook": "/convert"})
}

// writes is how many write requests the manager's clients have sent since it
// started: to TaskRuns, Pods and Events alike (client-go counts by method).
func (f metricFamilies) writes() float64 {
	var n float64
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		n += f.Sum("rest_client_requests_total", map[string]string{"method": method})
	}
	return n
}

// apiServerMetrics scrapes the API server's metrics, which count requests
// by resource and verb whoever sent them.
func apiServerMetrics(tb testing.TB, c *cluster) metricFamilies {
	tb.Helper()
	return metricFamilies{promscrape.APIServer(tb, c.config)}
}

// runAndPodWrites is how many writes the API server has served that only
// the controller makes: TaskRun status updates and patches, and Pod
// creates, updates, patches and deletes (not the status kwok writes as the
// kubelet, nor the scheduler's bindings).
func (f metricFamilies) runAndPodWrites() float64 {
	var n float64
	for _, verb := range []string{"PATCH", "PUT", "APPLY"} {
		n += f.Sum("apiserver_request_total", map[string]string{"resource": "taskruns", "subresource": "status", "verb": verb})
	}
	for _, verb := range []string{"POST", "PATCH", "PUT", "APPLY", "DELETE"} {
		n += f.Sum("apiserver_request_total", map[string]string{"resource": "pods", "subresource": "", "verb": verb})
	}
	return n
}

// liveReads is how many single-object GETs the API server has served for
// the objects a run's reconciles read (its TaskRun and Task, its Pod, its
// namespace): the reads that bypass the manager's cache. Nothing else in
// the cluster GETs them one by one (kwok, the scheduler and the garbage
// collector work from watches), so during a benchmark they are the
// manager's.
func (f metricFamilies) liveReads() float64 {
	var n float64
	for _, resource := range []string{"taskruns", "tasks", "pods", "namespaces"} {
		n += f.Sum("apiserver_request_total", map[string]string{"resource": resource, "subresource": "", "verb": "GET"})
	}
	return n
}

// rssMB is the resident set of process pid in MB, from /proc.
func rssMB(tb testing.TB, pid int) float64 { return procStatusMB(tb, pid, "VmRSS") }

// peakRSSMB is the largest resident set that process pid has had in its
// life, in MB (VmHWM), from /proc.
func peakRSSMB(tb testing.TB, pid int) float64 { return procStatusMB(tb, pid, "VmHWM") }

// procStatusMB reads the field of /proc/PID/status that key names, in kB
// there, in MB.
func procStatusMB(tb testing.TB, pid int, key string) float64 {
	tb.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				tb.Fatalf("reading %s %q: %v", key, line, err)
			}
			return float64(kb) / 1024
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}

// clusterProcesses are the processes whose CPU seconds the cluster
// benchmarks report, as "<name>-cpu-s" (cpustat.Report).
var clusterProcesses = []string{"kube-apiserver", "etcd", "kwok-controller", "kube-scheduler", "kube-controller", "manager"}

// profileAPIServer, when BENCH_PROFILE_DIR is set, records the API server's
// CPU profile for the next seconds, in the background, to
// $BENCH_PROFILE_DIR/<name>.pprof: where a phase spent the API server's CPU,
// for `go tool pprof`. The returned func waits for it to be written.
func profileAPIServer(tb testing.TB, c *cluster, name string, seconds int) (wait func()) {
	tb.Helper()
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	clientset, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		data, err := clientset.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).
			DoRaw(context.Background())
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".pprof"), data, 0o644)
		}
		done <- err
	}()
	return func() {
		if err := <-done; err != nil {
			tb.Errorf("recording the API server's CPU profile %s: %v", name, err)
			return
		}
		tb.Logf("wrote the API server's CPU profile to %s", filepath.Join(dir, name+".pprof"))
	}
}
