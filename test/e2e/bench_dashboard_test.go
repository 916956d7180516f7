//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkDashboard measures kubectl task dashboard (bin/kubectl-task, as
// a user runs it) against the local cluster, with the runs of its namespace
// written by a plain client as the controller leaves them (a third each
// Succeeded, Failed and Running; the controller is off). It reports the
// first byte of the runs page with 1,000 and then 10,000 runs (200 GETs
// each, one at a time, after 20 to warm up), the plugin's resident set with
// 10,000 runs, and the time from a status write to the runs page's stream
// carrying it while 20 runs a second change for 30 s: from the moment the
// write is sent to the moment the event that shows its new message arrives
// at a client of the stream (a browser's own rendering, a few milliseconds
// in TestDashboard, is not counted). It ignores b.N: run it with
// -benchtime=1x.
func BenchmarkDashboard(b *testing.B) {
	const few, many = 1000, 10000
	c := newCluster(b, "bench-dashboard")
	startManager(b, c, "--enable-controller=false")
	names := runNames("run", many)
	start := time.Now()
	inParallel(b, 2*loadWorkers, names[:few], func(name string) error { return writeDashboardRun(c, name) })
	b.Logf("wrote %d runs in %v", few, time.Since(start).Round(time.Second))

	d := startDashboard(b, c)
	waitForRunsPage(b, d, few)
	ttfb1k := firstBytes(b, d, 200)
	b.Logf("runs page with %d runs: first byte p50 %.1f ms, p99 %.1f ms", few, percentile(ttfb1k, 0.5), percentile(ttfb1k, 0.99))

	start = time.Now()
	inParallel(b, 2*loadWorkers, names[few:], func(name string) error { return writeDashboardRun(c, name) })
	b.Logf("wrote %d more runs in %v", many-few, time.Since(start).Round(time.Second))
	waitForRunsPage(b, d, many)
	ttfb10k := firstBytes(b, d, 200)
	b.Logf("runs page with %d runs: first byte p50 %.1f ms, p99 %.1f ms", many, percentile(ttfb10k, 0.5), percentile(ttfb10k, 0.99))
	rss := 0.0
	for range 5 {
		time.Sleep(2 * time.Second)
		rss = max(rss, rssMB(b, d.pid))
	}

	live, writes := liveLatencies(b, c, d, names, 20, 30*time.Second)
	b.Logf("status write to the page's stream, %d writes: p50 %.1f ms, p99 %.1f ms, max %.1f ms (the writes alone: p50 %.1f ms, p99 %.1f ms)",
		len(live), percentile(live, 0.5), percentile(live, 0.99), percentile(live, 1), percentile(writes, 0.5), percentile(writes, 0.99))

	b.ReportMetric(percentile(ttfb1k, 0.5), "ttfb-1000-p50-ms")
	b.ReportMetric(percentile(ttfb1k, 0.99), "ttfb-1000-p99-ms")
	b.ReportMetric(percentile(ttfb10k, 0.5), "ttfb-10000-p50-ms")
	b.ReportMetric(percentile(ttfb10k, 0.99), "ttfb-10000-p99-ms")
	b.ReportMetric(rss, "rss-MB")
	// Most of the rest is the binary's own pages, mapped from its file.
	b.ReportMetric(procStatusMB(b, d.pid, "RssAnon"), "rss-anon-MB")
	b.ReportMetric(peakRSSMB(b, d.pid), "peak-rss-MB")
	b.ReportMetric(percentile(live, 0.5), "live-p50-ms")
	b.ReportMetric(percentile(live, 0.99), "live-p99-ms")
	b.ReportMetric(percentile(live, 1), "live-max-ms")
	// How long the API server took to answer the writes themselves: the
	// part of the latency that is the write's, not the dashboard's.
	b.ReportMetric(percentile(writes, 0.5), "write-p50-ms")
	b.ReportMetric(percentile(writes, 0.99), "write-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// writeDashboardRun creates a run of Task "build", with two params and two
// labels, and writes the status the controller would: by the run's number,
// Succeeded, Failed in its second step, or Running its second step.
func writeDashboardRun(c *cluster, name string) error {
	ctx := context.Background()
	run := wrappers.TaskRun(ns, name, "build").Param("revision", "4f2a9c1e").Param("target", "linux/amd64").
		Label("team", "platform").Label("app", "api").Obj()
	if err := c.client.Create(ctx, run); err != nil {
		return fmt.Errorf("creating TaskRun %s: %w", name, err)
	}
	now := metav1.Now()
	exit := func(n int32) *int32 { return &n }
	run.Status = v1.TaskRunStatus{PodName: name + "-pod", StartTime: &now,
		Steps: []v1.StepState{{Name: "checkout", State: v1.StepTerminated, ExitCode: exit(0), Reason: "Completed", StartedAt: &now, FinishedAt: &now}}}
	succeeded := metav1.Condition{Type: v1.ConditionSucceeded, LastTransitionTime: now}
	switch spread(name) % 3 {
	case 0:
		succeeded.Status, succeeded.Reason, succeeded.Message = metav1.ConditionTrue, "Succeeded", "every step exited 0"
		run.Status.CompletionTime = &now
		run.Status.Steps = append(run.Status.Steps, v1.StepState{Name: "build", State: v1.StepTerminated, ExitCode: exit(0), Reason: "Completed", StartedAt: &now, FinishedAt: &now})
	case 1:
		succeeded.Status, succeeded.Reason, succeeded.Message = metav1.ConditionFalse, "StepFailed", `step "build" exited with code 2`
		run.Status.CompletionTime = &now
		run.Status.Steps = append(run.Status.Steps, v1.StepState{Name: "build", State: v1.StepTerminated, ExitCode: exit(2), Reason: "Error", StartedAt: &now, FinishedAt: &now})
	default:
		succeeded.Status, succeeded.Reason, succeeded.Message = metav1.ConditionUnknown, "Running", `running step "build" (2 of 2)`
		run.Status.Steps = append(run.Status.Steps, v1.StepState{Name: "build", State: v1.StepRunning, StartedAt: &now})
	}
	run.Status.Conditions = []metav1.Condition{succeeded}
	if err := c.client.Status().Update(ctx, run); err != nil {
		return fmt.Errorf("writing the status of TaskRun %s: %w", name, err)
	}
	return nil
}

// waitForRunsPage waits until the dashboard's runs page lists n runs.
func waitForRunsPage(b *testing.B, d *dashboard, n int) {
	b.Helper()
	want := fmt.Sprintf(`data-total="%d"`, n)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		res, err := http.Get(d.url + "/runs")
		if err == nil {
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if strings.Contains(string(page), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("the runs page did not list %d runs within 5 minutes (%v)", n, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// firstBytes GETs the runs page n times, one at a time, after 20 to warm
// up, and returns the times to each answer's first byte, sorted.
func firstBytes(b *testing.B, d *dashboard, n int) []time.Duration {
	b.Helper()
	var times []time.Duration
	for i := range n + 20 {
		var sent time.Time
		var first time.Duration
		trace := &httptrace.ClientTrace{
			WroteRequest:         func(httptrace.WroteRequestInfo) { sent = time.Now() },
			GotFirstResponseByte: func() { first = time.Since(sent) },
		}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, d.url+"/runs", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("GET /runs: %s", res.Status)
		}
		if i >= 20 {
			times = append(times, first)
		}
	}
	slices.Sort(times)
	return times
}

// liveLatencies follows the runs page's stream while it writes, perSecond
// times a second for span, a new message into the status of a Running run
// (each write a different run, in turn), and returns the time from each
// write's start to the event that carries its message, and the time each
// write took, both sorted.
func liveLatencies(b *testing.B, c *cluster, d *dashboard, names []string, perSecond int, span time.Duration) (live, writes []time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/live/runs", nil)
	res, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed below, once the goroutine that reads it is done with it
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()

	var mu sync.Mutex
	sentAt := map[string]time.Time{}
	var latencies []time.Duration
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			i := strings.Index(line, "bench-write-")
			if i < 0 {
				continue
			}
			token := line[i:]
			token = token[:strings.IndexAny(token+"<", "<")]
			at := time.Now()
			mu.Lock()
			if sent, ok := sentAt[token]; ok {
				latencies = append(latencies, at.Sub(sent))
				delete(sentAt, token)
			}
			mu.Unlock()
		}
	}()

	var running []string
	for _, name := range names {
		if spread(name)%3 == 2 {
			running = append(running, name)
		}
	}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	total := perSecond * int(span/time.Second)
	var wg sync.WaitGroup
	for i := range total {
		<-tick.C
		name, token := running[i%len(running)], fmt.Sprintf("bench-write-%05d", i)
		wg.Go(func() {
			run := &v1.TaskRun{}
			if err := c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
				b.Error(err)
				return
			}
			patch := client.MergeFrom(run.DeepCopy())
			run.Status.Conditions[0].Message = token
			sent := time.Now()
			mu.Lock()
			sentAt[token] = sent
			mu.Unlock()
			if err := c.client.Status().Patch(context.Background(), run, patch); err != nil {
				b.Error(err)
			}
			took := time.Since(sent)
			mu.Lock()
			writes = append(writes, took)
			mu.Unlock()
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		left := len(sentAt)
		mu.Unlock()
		if left == 0 || time.Now().After(deadline) {
			if left > 0 {
				b.Errorf("%d of %d writes never reached the page's stream", left, total)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(latencies)
	slices.Sort(writes)
	return latencies, writes
}
