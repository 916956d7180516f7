//go:build e2e

package e2e

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// This file drives the dashboard's browser tests: bin/kubectl-task dashboard
// as a process, as a user starts it, and one headless Chromium (Debian's
// package, which make test-e2e installs) whose tabs the test cases share.

// axeSource is axe-core (hack/fetch-axe.sh), injected into each page to
// find accessibility violations.
//
//go:embed testdata/axe/axe.min.js
var axeSource string

// dashboard is bin/kubectl-task dashboard serving a test's cluster.
type dashboard struct {
	// url is where it serves, as it printed it, with no trailing slash.
	url string
	cmd *exec.Cmd
	pid int
}

// startDashboard starts bin/kubectl-task dashboard on namespace ns of c
// with extra flags, and stops it (Ctrl-C) when the test ends.
func startDashboard(t testing.TB, c *cluster, extra ...string) *dashboard {
	t.Helper()
	args := append([]string{"dashboard", "-n", ns, "--port", "0"}, extra...)
	cmd := exec.Command(filepath.Join(c.repo, "bin", "kubectl-task"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.env["KUBECONFIG"])
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the dashboard: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the dashboard did not exit cleanly on Ctrl-C: %v\n%s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the dashboard had not exited 10s after Ctrl-C; killed it")
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		// "Dashboard of namespace default on https://...: http://127.0.0.1:PORT/"
		i := strings.LastIndex(line, "http://")
		if i < 0 {
			t.Fatalf("the dashboard printed %q, not its URL", line)
		}
		go func() {
			for range lines {
			}
		}()
		return &dashboard{url: strings.TrimSuffix(line[i:], "/"), cmd: cmd, pid: cmd.Process.Pid}
	case err := <-exited:
		t.Fatalf("the dashboard exited at once: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the dashboard printed no URL within 30s\n%s", stderr.String())
	}
	return nil
}

// newBrowser starts headless Chromium for the test and returns the context
// of its first tab; tab opens others.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium on PATH: run hack/install-tools.sh chromium (make test-e2e does)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser now, so that its start-up is not timed as a page's.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// tab opens a new tab of browser for the test, closed when the test ends.
func tab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// do runs actions in tab, failing the test on an error.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("in the browser: %v", err)
	}
}

// eval evaluates a JavaScript expression in tab, awaiting a promise.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %.80q: %v", expr, err)
	}
	return v
}

// waitInPage polls a JavaScript condition in tab until it is true. A
// condition that throws (the page is still loading: an element is not
// there yet) is false.
func waitInPage(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !eval[bool](t, ctx, "(() => { try { return !!("+cond+") } catch (e) { return false } })()") {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s (%s)", timeout, what, cond)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pressUntilFocused presses Tab until the element with id has the focus (at
// most 80 times), then key: proof that it is reachable and works from the
// keyboard.
func pressUntilFocused(t *testing.T, ctx context.Context, id, key string) {
	t.Helper()
	for range 80 {
		if eval[string](t, ctx, "document.activeElement ? document.activeElement.id : ''") == id {
			do(t, ctx, chromedp.KeyEvent(key))
			return
		}
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
	}
	t.Fatalf("80 presses of Tab never reached #%s", id)
}

// axeViolation is what axe-core reports of one rule a page breaks.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// checkAccessibility runs axe-core on the page in tab and fails the test on
// any serious or critical violation.
func checkAccessibility(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	// DevTools evaluates outside the page's CSP: the page itself may load
	// no script but its own.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](axeSource+";0")); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	out := eval[string](t, ctx, `axe.run(document).then(r => JSON.stringify({passes: r.passes.length, violations: r.violations}))`)
	var result struct {
		Passes     int            `json:"passes"`
		Violations []axeViolation `json:"violations"`
	}
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		t.Fatal(err)
	}
	violations := result.Violations
	if result.Passes == 0 {
		t.Errorf("%s: axe-core checked no rule", page)
	}
	t.Logf("%s: axe-core: %d rules pass, %d violated", page, result.Passes, len(violations))
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			targets, _ := json.Marshal(v.Nodes)
			t.Errorf("%s: axe-core finds a %s violation, %s (%s): %s", page, v.Impact, v.ID, v.Help, targets)
		} else {
			t.Logf("%s: axe-core notes a %s issue, %s (%s)", page, v.Impact, v.ID, v.Help)
		}
	}
}

// artifactsDir is where the browser tests keep their screenshots, for CI
// to keep: $E2E_ARTIFACTS/dashboard, else test/e2e/_artifacts/dashboard.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("E2E_ARTIFACTS")
	if dir == "" {
		dir = "_artifacts"
	}
	dir = filepath.Join(dir, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot saves the whole page in tab as dir/name.png.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// readAll reads r whole, for an HTTP response's body in a message.
func readAll(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	return fmt.Sprintf("%q", b)
}
