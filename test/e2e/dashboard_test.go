//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestDashboard drives kubectl task dashboard, as a process against the
// local cluster and its manager, from headless Chromium: one cluster, one
// dashboard and one browser for every case, one after another. It ends with
// a screenshot of each page, kept under the artifacts directory.
func TestDashboard(t *testing.T) {
	c := newCluster(t, "dashboard")
	startManager(t, c)
	create(t, c,
		wrappers.Task(ns, "slow").Description("Three steps of 5 seconds each").
			Step("first", "alpine:3", "sleep 5").Step("second", "alpine:3", "sleep 5").Step("third", "alpine:3", "sleep 5").Obj(),
		wrappers.Task(ns, "long").Description("Waits two minutes").Param("greeting").
			Step("wait", "alpine:3", `echo "$GREETING"; sleep 120`).Obj(),
	)
	d := startDashboard(t, c)
	browser := newBrowser(t)
	shots := artifactsDir(t)
	w, err := client.NewWithWatch(c.config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	dt := &dashboardTest{c: c, d: d, browser: browser, shots: shots, watcher: w}

	t.Run("RunStatusLive", dt.runStatusLive)
	t.Run("StepLogsLive", dt.stepLogsLive)
	t.Run("CancelAndRerunByKeyboard", dt.cancelAndRerun)
	t.Run("V1alpha1YAMLOfV1beta1Run", dt.v1alpha1YAML)
	t.Run("TypedParamsAndTimeouts", dt.typedParams)
	t.Run("Sidecars", dt.sidecars)
	t.Run("ClusterValuesAreText", dt.escaping)
	t.Run("ForeignPostsRefused", dt.foreignPosts)
	t.Run("StartFilterDeleteByKeyboard", dt.startFilterDelete)
	t.Run("Accessibility", dt.accessibility)
}

// dashboardTest is what TestDashboard's cases share.
type dashboardTest struct {
	c       *cluster
	d       *dashboard
	browser context.Context
	shots   string
	watcher client.WithWatch
}

// transition is a state a run was seen in, first, and when.
type transition struct {
	State string
	At    time.Time
}

// watchRun watches run name from before it exists until ctx ends, and
// returns a function that reports the states it was seen in: its summary
// (runstate.Summary) and, as "step NAME Running", each step's start.
func (dt *dashboardTest) watchRun(t *testing.T, ctx context.Context, name string) func() []transition {
	t.Helper()
	wi, err := dt.watcher.Watch(ctx, &v1.TaskRunList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatalf("watching TaskRun %s: %v", name, err)
	}
	var mu sync.Mutex
	var seen []transition
	known := map[string]bool{}
	note := func(state string, at time.Time) {
		if !known[state] {
			known[state] = true
			seen = append(seen, transition{state, at})
		}
	}
	go func() {
		defer wi.Stop()
		for ev := range wi.ResultChan() {
			at := time.Now()
			run, ok := ev.Object.(*v1.TaskRun)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			note(runstate.Summary(run), at)
			for _, s := range run.Status.Steps {
				if s.State == v1.StepRunning {
					note("step "+s.Name+" Running", at)
				}
			}
			mu.Unlock()
		}
	}()
	return func() []transition {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// onEveryPage runs js in tab before any script of each page it loads.
func onEveryPage(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	do(t, ctx, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		return err
	}))
}

// statusRecorder records, in the page, each status text each run's row
// shows and when (Date.now()), and sets a mark that a reload would lose.
const statusRecorder = `
document.addEventListener("DOMContentLoaded", () => {
  window.__noReload = true;
  window.__seen = [];
  const last = {};
  const record = () => {
    for (const tr of document.querySelectorAll("#runs-body tr")) {
      const s = tr.querySelector("td.status .state");
      if (s && last[tr.id] !== s.textContent) {
        last[tr.id] = s.textContent;
        window.__seen.push({id: tr.id, status: s.textContent, at: Date.now()});
      }
    }
  };
  new MutationObserver(record).observe(document.getElementById("runs-body"), {childList: true, subtree: true, characterData: true});
  record();
});`

// pageSeen is a state the page showed, and when.
type pageSeen struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	At     int64  `json:"at"`
}

// runStatusLive: the runs page, loaded before a run exists, shows it
// Pending, Running and Succeeded as each status is written, without a
// reload, each within 2 s of the write.
func (dt *dashboardTest) runStatusLive(t *testing.T) {
	ctx := tab(t, dt.browser)
	onEveryPage(t, ctx, statusRecorder)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs"), chromedp.WaitVisible(chromedp.ID("runs")))

	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	states := dt.watchRun(t, wctx, "live-1")
	create(t, dt.c, wrappers.TaskRun(ns, "live-1", "slow").Label("team", "web").Obj())
	waitInPage(t, ctx, "the row of live-1 to say Succeeded",
		`window.__seen.some(s => s.id === "run/default/live-1" && s.status === "Succeeded")`, time.Minute)
	if !eval[bool](t, ctx, "window.__noReload === true") {
		t.Fatal("the page was reloaded")
	}
	var seen []pageSeen
	if err := json.Unmarshal([]byte(eval[string](t, ctx, "JSON.stringify(window.__seen)")), &seen); err != nil {
		t.Fatal(err)
	}
	shown := map[string]time.Time{}
	for _, s := range seen {
		if _, ok := shown[s.Status]; !ok && s.ID == "run/default/live-1" {
			shown[s.Status] = time.UnixMilli(s.At)
		}
	}
	written := map[string]bool{}
	for _, tr := range states() {
		if strings.HasPrefix(tr.State, "step ") {
			continue
		}
		written[tr.State] = true
		at, ok := shown[tr.State]
		switch lag := at.Sub(tr.At); {
		case !ok:
			t.Errorf("live-1 was %s from %s, which the page never showed (it showed %v)", tr.State, tr.At.Format(time.StampMilli), seen)
		case lag > 2*time.Second:
			t.Errorf("live-1 was %s from %s; the page showed it %s later, want at most 2s", tr.State, tr.At.Format(time.StampMilli), lag)
		default:
			t.Logf("live-1 %s: on the page %dms after the watch saw it", tr.State, lag.Milliseconds())
		}
	}
	for _, want := range []string{"Pending", "Running", "Succeeded"} {
		if !written[want] {
			t.Errorf("the API server never showed live-1 %s", want)
		}
	}
	screenshot(t, ctx, dt.shots, "runs")
}

// logRecorder records, in the page, each log line appended and when.
const logRecorder = `
document.addEventListener("DOMContentLoaded", () => {
  window.__lines = [];
  new MutationObserver((mutations) => {
    for (const m of mutations) for (const n of m.addedNodes) {
      if (n.nodeType === 1 && n.classList.contains("line")) {
        window.__lines.push({step: n.parentElement.id.slice(4), text: n.textContent, at: Date.now()});
      }
    }
  }).observe(document.getElementById("log-panels"), {childList: true, subtree: true});
});`

// logLine is a line the page appended to a step's log, and when.
type logLine struct {
	Step, Text string
	At         int64
}

// stepLogsLive: a run's page shows each step's log lines, in order, while
// the step runs (before the next step starts), a line an element.
func (dt *dashboardTest) stepLogsLive(t *testing.T) {
	ctx := tab(t, dt.browser)
	onEveryPage(t, ctx, logRecorder)
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	states := dt.watchRun(t, wctx, "logs-1")
	create(t, dt.c, wrappers.TaskRun(ns, "logs-1", "slow").Obj())
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/logs-1"), chromedp.WaitVisible(chromedp.ID("run-live")))
	waitInPage(t, ctx, "the page to show logs-1 Succeeded", `document.getElementById("run-status").textContent === "Succeeded"`, time.Minute)
	waitInPage(t, ctx, "the logs to be read to their end", `document.getElementById("log-state").textContent.includes("end")`, 10*time.Second)

	var lines []logLine
	if err := json.Unmarshal([]byte(eval[string](t, ctx, "JSON.stringify(window.__lines)")), &lines); err != nil {
		t.Fatal(err)
	}
	// step.log is in the CRI log format kwok serves from: TIME STREAM TAG TEXT.
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(readStepLog(t, dt.c)), "\n") {
		want = append(want, strings.SplitN(line, " ", 4)[3])
	}
	at := map[string]time.Time{}
	for _, tr := range states() {
		at[tr.State] = tr.At
	}
	steps := []string{"first", "second", "third"}
	for i, step := range steps {
		var texts []string
		var first time.Time
		for _, l := range lines {
			if l.Step == step {
				texts = append(texts, strings.TrimSuffix(l.Text, "\n"))
				if first.IsZero() {
					first = time.UnixMilli(l.At)
				}
			}
		}
		if !slices.Equal(texts, want) {
			t.Errorf("step %s: the page appended %q, want the log's lines %q, one element each", step, texts, want)
			continue
		}
		// The next step's start, or for the last the run's end: the
		// lines came while the step ran.
		next := "Succeeded"
		if i+1 < len(steps) {
			next = "step " + steps[i+1] + " Running"
		}
		if first.After(at[next]) {
			t.Errorf("step %s's first line appeared at %s, after %s (%s): not while it ran",
				step, first.Format(time.StampMilli), next, at[next].Format(time.StampMilli))
		}
		t.Logf("step %s: first line %dms after it started", step, first.Sub(at["step "+step+" Running"]).Milliseconds())
	}
	screenshot(t, ctx, dt.shots, "run")
}

// converted, beside v1.
func (dt *dashboardTest) v1alpha1YAML(t *testing.T) {
	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/long-1/yaml"), chromedp.WaitVisible(chromedp.ID("yaml-0")))
	alpha := eval[string](t, ctx, `document.getElementById("yaml-0").textContent`)
	beta := eval[string](t, ctx, `document.getElementById("yaml-1").textContent`)
	for _, want := range []string{"apiVersion: minitask.dev/v1alpha1", "taskRef: long\n", "phase: Failed", "minitask.dev/conversion-data:", `"greeting"`} {
		if !strings.Contains(alpha, want) {
			t.Errorf("the v1alpha1 YAML has no %q:\n%s", want, alpha)
		}
	}
	for _, want := range []string{"apiVersion: minitask.dev/v1beta1", "taskRef:\n    name: long", "reason: TaskRunCancelled", "- name: greeting\n    value: hi"} {
		if !strings.Contains(beta, want) {
			t.Errorf("the v1beta1 YAML has no %q:\n%s", want, beta)
		}
	}
	if strings.Contains(alpha+beta, "managedFields:") {
		t.Error("the YAML shows managedFields")
	}
	screenshot(t, ctx, dt.shots, "yaml")
}

// payload is what an attacker who may write Tasks or runs would write, to
