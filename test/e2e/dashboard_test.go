//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
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
	wi, err := dt.watcher.Watch(ctx, &v1beta1.TaskRunList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
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
			run, ok := ev.Object.(*v1beta1.TaskRun)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			note(runstate.Summary(run), at)
			for _, s := range run.Status.Steps {
				if s.State == v1beta1.StepRunning {
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

// cancelAndRerun: the run page's Cancel and Rerun buttons, reached and
// pressed from the keyboard, cancel the run (its logs kept) and start a new
// one with its settings.
func (dt *dashboardTest) cancelAndRerun(t *testing.T) {
	ctx := tab(t, dt.browser)
	create(t, dt.c, wrappers.TaskRun(ns, "long-1", "long").Param("greeting", "hi").Label("team", "web").Obj())
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/long-1"))
	waitInPage(t, ctx, "long-1 to be Running", `document.getElementById("run-status").textContent === "Running"`, time.Minute)
	waitInPage(t, ctx, "long-1's log", `document.querySelectorAll("#log-wait .line").length > 0`, 20*time.Second)

	pressUntilFocused(t, ctx, "cancel", kb.Enter)
	waitInPage(t, ctx, "the page to say the cancel was asked for", `document.querySelector(".flash") && location.search.includes("done=cancelled")`, 10*time.Second)
	waitInPage(t, ctx, "long-1 to be Failed(TaskRunCancelled)", `document.getElementById("run-status").textContent === "Failed(TaskRunCancelled)"`, time.Minute)
	waitInPage(t, ctx, "long-1's log, kept after the cancel", `document.querySelectorAll("#log-wait .line").length > 0 && document.getElementById("log-state").textContent.includes("end")`, 20*time.Second)
	screenshot(t, ctx, dt.shots, "run-cancelled")

	pressUntilFocused(t, ctx, "rerun", kb.Enter)
	waitInPage(t, ctx, "the new run's page", `location.pathname.startsWith("/runs/default/long-") && location.pathname !== "/runs/default/long-1"`, 10*time.Second)
	path := eval[string](t, ctx, "location.pathname")
	name := strings.TrimPrefix(path, "/runs/default/")
	again := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, again); err != nil {
		t.Fatalf("the rerun %s: %v", name, err)
	}
	if again.Spec.TaskRef.Name != "long" || !slices.Equal(again.Spec.Params, []v1beta1.Param{{Name: "greeting", Value: "hi"}}) ||
		again.Labels["team"] != "web" || again.Spec.Status != "" {
		t.Errorf("the rerun %s has spec %+v and labels %v; want long-1's settings, not its cancel request", name, again.Spec, again.Labels)
	}
	dt.cancelByAPI(t, name)
}

// cancelByAPI cancels a run the test no longer needs running.
func (dt *dashboardTest) cancelByAPI(t *testing.T, name string) {
	t.Helper()
	run := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
	if err := dt.c.client.Patch(context.Background(), run, patch); err != nil {
		t.Fatal(err)
	}
}

// v1alpha1YAML: the YAML page shows a v1beta1 run as v1alpha1 serves it,
// converted, beside v1beta1.
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
// run script in the browser of whoever looks at them.
const payload = `<script>window.__xss=1</script>"><img src=x onerror="window.__xss=2">`

// escaping: a Task's description, a param's description, default and value,
// a step's script and a condition's message that hold markup show as text
// on every page, and run nothing. Names and labels cannot hold it: the API
// server refuses them, which the case checks too.
func (dt *dashboardTest) escaping(t *testing.T) {
	bg := context.Background()
	create(t, dt.c,
		wrappers.Task(ns, "xss").Description(payload).
			Params(v1beta1.ParamSpec{Name: "p", Description: payload, Default: ptr.To(payload)}).
			Step("say", "alpine:3", "echo '"+payload+"'").Obj(),
		wrappers.TaskRun(ns, "xss-1", "xss").Param("p", payload).Obj(),
		wrappers.TaskRun(ns, "xss-msg", "no-such-task").Obj(),
	)
	for what, run := range map[string]*v1beta1.TaskRun{
		"a name":        wrappers.TaskRun(ns, "x", "xss").Obj(),
		"a label value": wrappers.TaskRun(ns, "xss-label", "xss").Label("l", payload).Obj(),
	} {
		if what == "a name" {
			run.Name = payload
		}
		if err := dt.c.client.Create(bg, run); !apierrors.IsInvalid(err) {
			t.Errorf("a run with markup in %s: the API server answered %v, want Invalid", what, err)
		}
	}
	// A finished run's status is the controller's no more: give it a
	// message with markup, as a writer of statuses could.
	waitFor(t, time.Minute, "xss-msg to wait for its Task", func(ctx context.Context) error {
		run := &v1beta1.TaskRun{}
		if err := dt.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "xss-msg"}, run); err != nil {
			return err
		}
		if !runstate.WaitingForTask(run) || runstate.Succeeded(run) == nil {
			return fmt.Errorf("it is %s", runstate.Summary(run))
		}
		run.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
			Reason: "Failed", Message: payload, LastTransitionTime: metav1.Now()}}
		return dt.c.client.Status().Update(ctx, run)
	})

	ctx := tab(t, dt.browser)
	// Where the payload shows; the other pages show rows that hold it.
	shows := map[string]bool{"/runs?task=no-such-task": true, "/runs/default/xss-1": true, "/runs/default/xss-msg": true,
		"/tasks/default/xss": true, "/runs/default/xss-1/yaml": true}
	for _, path := range []string{"/runs", "/runs?task=no-such-task", "/runs/default/xss-1", "/runs/default/xss-msg", "/tasks/default/xss", "/runs/default/xss-1/yaml", "/tasks"} {
		do(t, ctx, chromedp.Navigate(dt.d.url+path), chromedp.WaitReady(chromedp.CSS("main")))
		time.Sleep(300 * time.Millisecond) // the live parts' first events
		if got := eval[string](t, ctx, `String(window.__xss)`); got != "undefined" {
			t.Errorf("%s: the payload ran (window.__xss = %s)", path, got)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("img, script:not([src='/static/app.js'])").length`); n != 0 {
			t.Errorf("%s: the page has %d img or script elements the dashboard did not write", path, n)
		}
		if shows[path] && !eval[bool](t, ctx, `document.body.innerText.includes(`+jsString(payload)+`)`) {
			t.Errorf("%s: the payload is not shown as text", path)
		}
	}
	screenshot(t, ctx, dt.shots, "tasks")
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// foreignPosts: a POST without the dashboard's token, or with it from
// another Origin or to another Host, is refused, and so is a GET to another
// Host (DNS rebinding); a page on another site cannot drive the dashboard
// through the browser, even knowing the token.
func (dt *dashboardTest) foreignPosts(t *testing.T) {
	create(t, dt.c, wrappers.TaskRun(ns, "long-2", "long").Param("greeting", "hi").Obj())
	res, err := http.Get(dt.d.url + "/runs/default/long-2")
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(res.Body)
	m := csrfField.FindStringSubmatch(string(html))
	res.Body.Close()
	if m == nil {
		t.Fatal("the run page has no CSRF token")
	}
	token := m[1]
	cancelURL := dt.d.url + "/runs/default/long-2/cancel"
	host := strings.TrimPrefix(dt.d.url, "http://")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for name, tc := range map[string]struct {
		method, host, origin, token string
	}{
		"no token":                  {method: http.MethodPost, origin: dt.d.url},
		"a wrong token":             {method: http.MethodPost, origin: dt.d.url, token: "forged"},
		"another Origin":            {method: http.MethodPost, origin: "http://evil.example", token: token},
		"another Host (rebinding)":  {method: http.MethodPost, host: "evil.example:" + strings.Split(host, ":")[1], token: token},
		"a GET to another Host":     {method: http.MethodGet, host: "evil.example:" + strings.Split(host, ":")[1]},
		"a null Origin (a sandbox)": {method: http.MethodPost, origin: "null", token: token},
	} {
		body := url.Values{}
		if tc.token != "" {
			body.Set("csrf", tc.token)
		}
		req, _ := http.NewRequest(tc.method, cancelURL, strings.NewReader(body.Encode()))
		if tc.method == http.MethodGet {
			req, _ = http.NewRequest(tc.method, dt.d.url+"/runs", nil)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		text := readAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", name, res.StatusCode, text)
		}
	}

	// A page of another site (another port is another origin) posts a
	// form to the dashboard, token included: the browser sends its Origin.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!DOCTYPE html><form id="f" method="post" action="%s"><input name="csrf" value="%s"></form>
<script>document.getElementById("f").submit()</script>`, cancelURL, token)
	}))
	defer evil.Close()
	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(evil.URL))
	waitInPage(t, ctx, "the dashboard's refusal", `location.href.startsWith(`+jsString(dt.d.url)+`) && document.body && document.body.innerText.includes("refused")`, 10*time.Second)
	// And a script of the dashboard's own origin without the token.
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs"))
	if code := eval[int](t, ctx, `fetch("/runs/default/long-2/cancel", {method: "POST"}).then(r => r.status)`); code != http.StatusForbidden {
		t.Errorf("a same-origin POST without the token: %d, want 403", code)
	}
	run := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "long-2"}, run); err != nil {
		t.Fatal(err)
	}
	if runstate.CancelRequested(run) {
		t.Error("a refused request cancelled long-2")
	}
	// With its own token and Origin, the same request works.
	body := url.Values{"csrf": {token}}
	req, _ := http.NewRequest(http.MethodPost, cancelURL, strings.NewReader(body.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", dt.d.url)
	res, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("the dashboard's own POST: %d, want 303", res.StatusCode)
	}
}

// startFilterDelete: a run started from a Task's form, the runs filtered
// and a run deleted, each from the keyboard alone.
func (dt *dashboardTest) startFilterDelete(t *testing.T) {
	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/tasks/default/long"), chromedp.WaitVisible(chromedp.ID("start-form")))
	screenshot(t, ctx, dt.shots, "task")
	pressUntilFocused(t, ctx, "param.greeting", "typed")
	pressUntilFocused(t, ctx, "start", kb.Enter)
	waitInPage(t, ctx, "the started run's page", `location.pathname.startsWith("/runs/default/long-") && location.search.includes("done=started")`, 10*time.Second)
	name := strings.TrimPrefix(eval[string](t, ctx, "location.pathname"), "/runs/default/")
	started := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, started); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(started.Spec.Params, []v1beta1.Param{{Name: "greeting", Value: "typed"}}) {
		t.Errorf("the run started from the form has params %v, want greeting=typed", started.Spec.Params)
	}
	dt.cancelByAPI(t, name)

	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs"), chromedp.WaitVisible(chromedp.ID("runs")))
	pressUntilFocused(t, ctx, "f-task", "slow")
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitInPage(t, ctx, "the filtered list", `location.search.includes("task=slow")`, 10*time.Second)
	if rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#runs-body tr")].map(r => r.id)`); !slices.Equal(rows, []string{"run/default/logs-1", "run/default/live-1"}) {
		t.Errorf("the runs of Task slow: %v, want logs-1 and live-1", rows)
	}

	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/xss-msg"), chromedp.WaitVisible(chromedp.ID("delete")))
	pressUntilFocused(t, ctx, "delete", kb.Enter)
	waitInPage(t, ctx, "the runs page saying xss-msg is deleted", `location.pathname === "/runs" && document.querySelector(".flash").textContent.includes("xss-msg")`, 10*time.Second)
	err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "xss-msg"}, &v1beta1.TaskRun{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("xss-msg after Delete: %v, want NotFound", err)
	}
}

// accessibility: axe-core finds no serious or critical violation on any
// page.
func (dt *dashboardTest) accessibility(t *testing.T) {
	ctx := tab(t, dt.browser)
	for _, path := range []string{"/runs", "/runs?status=failed&task=long", "/runs/default/live-1", "/runs/default/long-1",
		"/runs/default/long-1/yaml", "/tasks", "/tasks/default/long", "/runs/default/no-such-run"} {
		do(t, ctx, chromedp.Navigate(dt.d.url+path), chromedp.WaitReady(chromedp.CSS("main")))
		time.Sleep(300 * time.Millisecond)
		checkAccessibility(t, ctx, path)
	}
}
