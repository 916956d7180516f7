package cli_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestErrors checks that every error is one line that says what to do, with
// the documented exit code, and that nothing is created on the way.
func TestErrors(t *testing.T) {
	h := newHarness(t)
	h.history(t)
	unreachable := filepath.Join(t.TempDir(), "unreachable")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := map[string]struct {
		args []string
		// raw runs args as they are, with no --kubeconfig or -n added.
		raw      bool
		wantCode int
		wantErr  string
	}{
		"unknown Task": {
			args:     []string{"start", "nope", "-p", "greeting=hi"},
			wantCode: 1,
			wantErr:  `Task "nope" not found in namespace "NS"; list the Tasks there with: kubectl get tasks.minitask.dev -n NS`,
		},
		"unknown run to describe": {
			args:     []string{"describe", "nope"},
			wantCode: 1,
			wantErr:  `TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS`,
		},
		"unknown run to cancel": {
			args:     []string{"cancel", "nope"},
			wantCode: 1,
			wantErr:  `TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS`,
		},
		"unknown run to follow": {
			args:     []string{"logs", "nope", "-f"},
			wantCode: 1,
			wantErr:  `TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS`,
		},
		"-p without =": {
			args:     []string{"start", "greet", "-p", "greeting"},
			wantCode: 2,
			wantErr:  `malformed -p "greeting": it needs name=value, e.g. -p greeting=hello; see 'kubectl task start --help'`,
		},
		"-p without a name": {
			args:     []string{"start", "greet", "-p", "=hi"},
			wantCode: 2,
			wantErr:  `malformed -p "=hi": it needs name=value, e.g. -p greeting=hello; see 'kubectl task start --help'`,
		},
		"-p twice": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "-p", "greeting=yo"},
			wantCode: 2,
			wantErr:  `-p greeting is given twice; give each param once; see 'kubectl task start --help'`,
		},
		"-p for a param the Task does not declare": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "-p", "gretting=yo"},
			wantCode: 2,
			wantErr:  `Task "greet" has no param "gretting"; its params are: greeting, name; see 'kubectl task start --help'`,
		},
		"unknown flag": {
			args:     []string{"list", "--bogus"},
			wantCode: 2,
			wantErr:  `unknown flag: --bogus; see 'kubectl task list --help'`,
		},
		"unknown shorthand flag": {
			args:     []string{"start", "greet", "-x"},
			wantCode: 2,
			wantErr:  `unknown shorthand flag: 'x' in -x; see 'kubectl task start --help'`,
		},
		"a flag without its value": {
			args:     []string{"start", "greet", "-p"},
			raw:      true,
			wantCode: 2,
			wantErr:  `flag needs an argument: 'p' in -p; see 'kubectl task start --help'`,
		},
		"unknown flag before the command": {
			args:     []string{"--bogus", "list"},
			raw:      true,
			wantCode: 2,
			wantErr:  `unknown flag: --bogus; see 'kubectl task --help'`,
		},
		"unknown command": {
			args:     []string{"run", "greet"},
			wantCode: 2,
			wantErr:  `unknown command "run"; see 'kubectl task --help'`,
		},
		"no run named": {
			args:     []string{"describe"},
			wantCode: 2,
			wantErr:  `kubectl task describe needs the name of a run; see 'kubectl task describe --help'`,
		},
		"two runs named": {
			args:     []string{"cancel", "a", "b"},
			wantCode: 2,
			wantErr:  `kubectl task cancel takes one argument, the name of a run, but got 2; see 'kubectl task cancel --help'`,
		},
		"--name and --generate-name": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--name", "a", "--generate-name"},
			wantCode: 2,
			wantErr:  `give --name or --generate-name, not both; see 'kubectl task start --help'`,
		},
		"a timeout that is no duration": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--timeout", "10"},
			wantCode: 2,
			wantErr:  `--timeout "10" is not a duration such as 10m or 1h30m (0s means no limit); see 'kubectl task start --help'`,
		},
		"a negative timeout": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--timeout=-1m"},
			wantCode: 2,
			wantErr:  `--timeout "-1m" is not a duration such as 10m or 1h30m (0s means no limit); see 'kubectl task start --help'`,
		},
		"a pending timeout that is no duration": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--pending-timeout", "soon"},
			wantCode: 2,
			wantErr:  `--pending-timeout "soon" is not a duration such as 5m or 90s (0s means no limit); see 'kubectl task start --help'`,
		},
		"a negative pending timeout": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--pending-timeout=-5m"},
			wantCode: 2,
			wantErr:  `--pending-timeout "-5m" is not a duration such as 5m or 90s (0s means no limit); see 'kubectl task start --help'`,
		},
		"a request timeout that is no duration": {
			args:     []string{"list", "--request-timeout", "soon"},
			wantCode: 2,
			wantErr:  `--request-timeout "soon" is not a duration such as 30s or 1m, nor a number of seconds; 0 means no limit; see 'kubectl task list --help'`,
		},
		"more seconds of request timeout than a duration holds": {
			// client-go took 9300000000 s for a negative timeout: none.
			args:     []string{"list", "--request-timeout", "9300000000"},
			wantCode: 2,
			wantErr:  `--request-timeout "9300000000" is not a duration such as 30s or 1m, nor a number of seconds; 0 means no limit; see 'kubectl task list --help'`,
		},
		"a run name taken": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--name", "greet-old"},
			wantCode: 1,
			wantErr:  `TaskRun "greet-old" already exists in namespace "NS"; choose another --name, or leave it out to generate one`,
		},
		"a shell with no completion": {
			args:     []string{"completion", "fish"},
			wantCode: 2,
			wantErr:  `kubectl task completion needs one shell: bash or zsh; see 'kubectl task completion --help'`,
		},
		"no cluster reachable": {
			args:     []string{"list", "--kubeconfig", unreachable},
			raw:      true,
			wantCode: 1,
			wantErr:  `cannot reach the cluster at https://127.0.0.1:1 (connection refused); check that it is running, and --kubeconfig and --context`,
		},
		"no cluster reachable, starting": {
			args:     []string{"start", "greet", "-p", "greeting=hi", "--kubeconfig", unreachable},
			raw:      true,
			wantCode: 1,
			wantErr:  `cannot reach the cluster at https://127.0.0.1:1 (connection refused); check that it is running, and --kubeconfig and --context`,
		},
		"no kubeconfig file": {
			args:     []string{"list", "--kubeconfig", "/nonexistent/kubeconfig"},
			raw:      true,
			wantCode: 1,
			wantErr:  `cannot read the kubeconfig: stat /nonexistent/kubeconfig: no such file or directory; check --kubeconfig or KUBECONFIG`,
		},
		"an unknown context": {
			args:     []string{"list", "--kubeconfig", env.Kubeconfig, "--context", "nope"},
			raw:      true,
			wantCode: 1,
			wantErr:  `the kubeconfig is not usable: context was not found for specified context: nope; check --kubeconfig, KUBECONFIG and --context`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := h.TaskRunNames(t)
			var got result
			if tc.raw {
				got = h.execute(t, tc.args)
			} else {
				got = h.kubectlTask(t, tc.args...)
			}
			want := result{Code: tc.wantCode, Stderr: "error: " + tc.wantErr + "\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
			if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
				t.Errorf("TaskRuns changed (-before +after):\n%s", diff)
			}
		})
	}

	t.Run("a bug", func(t *testing.T) {
		h.logs = panickingLogs{}
		defer func() { h.logs = nil }()
		got := h.kubectlTask(t, "logs", "greet-old")
		want := result{Code: 1, Stderr: "error: internal error: a bug; please report it at https://github.com/minitask-dev/minitask/issues\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("logs with a bug (-want +got):\n%s", diff)
		}
	})

	t.Run("no kubeconfig at all", func(t *testing.T) {
		t.Setenv("KUBECONFIG", "")
		t.Setenv("HOME", t.TempDir())
		// Not in a Pod, even when the tests run in one.
		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		got := h.execute(t, []string{"list"})
		want := result{Code: 1, Stderr: "error: no cluster configured: no kubeconfig found; give --kubeconfig, set KUBECONFIG, or create ~/.kube/config\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("list (-want +got):\n%s", diff)
		}
	})

	t.Run("no kubeconfig, in a Pod without its token", func(t *testing.T) {
		if _, err := os.Stat(serviceAccountToken); err == nil {
			t.Skipf("%s exists here", serviceAccountToken)
		}
		t.Setenv("KUBECONFIG", "")
		t.Setenv("HOME", t.TempDir())
		t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "443")
		got := h.execute(t, []string{"list"})
		want := result{Code: 1, Stderr: "error: no cluster configured: no kubeconfig found, and the in-cluster config is not usable (open " +
			serviceAccountToken + ": no such file or directory); give --kubeconfig or set KUBECONFIG, or mount the Pod's ServiceAccount token\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("list (-want +got):\n%s", diff)
		}
	})
}

// serviceAccountToken is where client-go reads a Pod's ServiceAccount token.
const serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// panickingLogs is a log source with a bug.
type panickingLogs struct{}

func (panickingLogs) Steps(context.Context, bool) ([]string, error) { panic("a bug") }

func (panickingLogs) Open(context.Context, string, bool) (io.ReadCloser, error) { panic("a bug") }
