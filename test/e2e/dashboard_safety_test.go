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
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

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
			Params(v1.ParamSpec{Name: "p", Description: payload, Default: v1.NewStringValue(payload)}).
			Step("say", "alpine:3", "echo '"+payload+"'").Obj(),
		wrappers.TaskRun(ns, "xss-1", "xss").Param("p", payload).Obj(),
		wrappers.TaskRun(ns, "xss-msg", "no-such-task").Obj(),
	)
	for what, run := range map[string]*v1.TaskRun{
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
		run := &v1.TaskRun{}
		if err := dt.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "xss-msg"}, run); err != nil {
			return err
		}
		if !runstate.WaitingForTask(run) || runstate.Succeeded(run) == nil {
			return fmt.Errorf("it is %s", runstate.Summary(run))
		}
		run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse,
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
	run := &v1.TaskRun{}
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
