package cli_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/cli"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
)

// harness is one test's namespace, the clock its commands see, and where
// their step logs come from.
type harness struct {
	*testenv.Harness
	now time.Time
	// logs, if set, replaces the Pod logs API as the commands' log source.
	logs runlogs.Source
	// cacheDir is where the commands cache discovery (--cache-dir), the
	// test's own.
	cacheDir string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return harnessOn(t, env)
}

// harnessOn is newHarness on e, an API server a test started for itself.
func harnessOn(t *testing.T, e *testenv.Env) *harness {
	t.Helper()
	return &harness{Harness: e.NewHarness(t), now: time.Now().UTC().Truncate(time.Second),
		cacheDir: t.TempDir()}
}

// env is the API server the package's tests share; nil under -short.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// result is what one kubectl task command did.
type result struct {
	Code           int
	Stdout, Stderr string
}

// kubectlTask runs the plugin in-process against the test API server, in the
// harness's namespace, and returns what it printed, with the namespace's
// generated name replaced by NS.
func (h *harness) kubectlTask(t *testing.T, args ...string) result {
	t.Helper()
	args = append(args, "--kubeconfig", h.Env.Kubeconfig, "-n", h.NS, "--cache-dir", h.cacheDir)
	return h.execute(t, args)
}

// execute runs the plugin with exactly args.
func (h *harness) execute(t *testing.T, args []string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	o := cli.Options{
		Streams:      genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:          func() time.Time { return h.now },
		PollInterval: 50 * time.Millisecond,
	}
	if h.logs != nil {
		o.LogSource = func(*cli.Clients, string, string) runlogs.Source { return h.logs }
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitTimeout)
	defer cancel()
	code := cli.Execute(ctx, args, o)
	fix := func(s string) string { return strings.ReplaceAll(s, h.NS, "NS") }
	return result{Code: code, Stdout: fix(out.String()), Stderr: fix(errOut.String())}
}

// cannedLogs serves the same log for a step of any run, in the steps' order of
// the test Task; a step with no log has not started.
type cannedLogs map[string]string

func (c cannedLogs) Steps(context.Context, bool) ([]string, error) {
	return []string{"prepare", "say"}, nil
}

func (c cannedLogs) Open(_ context.Context, step string, _ bool) (io.ReadCloser, error) {
	log, ok := c[step]
	if !ok {
		return nil, runlogs.ErrNotStarted
	}
	return io.NopCloser(strings.NewReader(log)), nil
}

// startController runs the TaskRun controller on the harness's namespace.
func (h *harness) startController(t *testing.T) {
	t.Helper()
	h.StartManager(t, func(mgr ctrl.Manager) error {
		return (&controllers.TaskRunReconciler{Client: mgr.GetClient(), DefaultTimeout: time.Hour}).SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache = runcache.Options() })
}

// greetTask is the Task the tests run: one param that needs a value, one with
// a default, and two steps.
func greetTask(name string) *v1.Task {
	return wrappers.Task("", name).Description("Says hello").
		Params(
			v1.ParamSpec{Name: "greeting", Description: "What to say"},
			v1.ParamSpec{Name: "name", Description: "Who to greet", Default: v1.NewStringValue("world")},
		).
		Step("prepare", "alpine:3", "echo preparing").
		Step("say", "alpine:3", `echo "$(params.greeting), $(params.name)"`).Obj()
}

// waitForSummary waits until the run's status reads want, e.g. Running.
func (h *harness) waitForSummary(t *testing.T, name, want string) *v1.TaskRun {
	t.Helper()
	var run *v1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.TaskRun(t, name)
		got := runstate.Summary(run)
		return got == want, got
	}, "TaskRun %s to be %s", name, want)
	return run
}

// setRunStatus writes a run's status, as the controller would.
func (h *harness) setRunStatus(t *testing.T, name string, status v1.TaskRunStatus) {
	t.Helper()
	h.UpdateTaskRunStatus(t, name, func(run *v1.TaskRun) { run.Status = status })
}
