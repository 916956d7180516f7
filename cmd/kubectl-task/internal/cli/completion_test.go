package cli_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	h.history(t)

	t.Run("scripts", func(t *testing.T) {
		for shell, want := range map[string]string{"bash": "__start_kubectl-task", "zsh": "#compdef kubectl-task"} {
			got := h.execute(t, []string{"completion", shell})
			if got.Code != 0 || got.Stderr != "" || !strings.Contains(got.Stdout, want) {
				t.Errorf("completion %s: code %d, stderr %q, stdout without %q", shell, got.Code, got.Stderr, want)
			}
		}
	})

	// Shells ask through the hidden __complete command: each candidate on a
	// line, then the directive (4: do not complete file names).
	tests := map[string]struct {
		args []string
		want []string
	}{
		"Tasks to start":                 {args: []string{"start", ""}, want: []string{"greet", "quiet"}},
		"Tasks to list, by prefix":       {args: []string{"list", "q"}, want: []string{"quiet"}},
		"runs to describe, newest first": {args: []string{"describe", ""}, want: []string{"greet-new", "greet-running", "lost-run", "greet-failed", "greet-old"}},
		"runs to follow, by prefix":      {args: []string{"logs", "greet-f"}, want: []string{"greet-failed"}},
		"only unfinished runs to cancel": {args: []string{"cancel", ""}, want: []string{"greet-new", "greet-running", "lost-run"}},
		"the steps of a run":             {args: []string{"logs", "greet-failed", "--step", ""}, want: []string{"prepare", "say"}},
		"nothing after the run":          {args: []string{"describe", "greet-old", ""}},
		"runs to rerun, by prefix":       {args: []string{"rerun", "greet-o"}, want: []string{"greet-old"}},
		"Tasks whose runs to delete":     {args: []string{"delete", "--task", ""}, want: []string{"greet", "quiet"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// The connection flags go right after the command, so that
			// the word being completed stays last.
			args := append([]string{"__complete", tc.args[0], "--kubeconfig", env.Kubeconfig, "-n", h.NS, "--cache-dir", h.cacheDir}, tc.args[1:]...)
			args[len(args)-1] = strings.ReplaceAll(args[len(args)-1], "NS", h.NS)
			got := h.execute(t, args)
			want := strings.Join(append(tc.want, ":4"), "\n") + "\n"
			if diff := cmp.Diff(want, got.Stdout); diff != "" || got.Code != 0 {
				t.Errorf("__complete %v: code %d (-want +got):\n%s", tc.args, got.Code, diff)
			}
		})
	}
}

// TestCompletionStartBindings checks the completion of start's -w and
// --serviceaccount.
func TestCompletionStartBindings(t *testing.T) {
	h := newHarness(t)
	h.release3History(t)
	h.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}})

	// The directive: 4 does not complete file names; 6 adds no space after
	// the word, so that NAME= goes on with its source.
	tests := map[string]struct {
		args      []string
		want      []string
		directive string
	}{
		"the Task's workspaces":            {args: []string{"start", "build", "-w", ""}, want: []string{"source=", "settings=", "scratch="}, directive: ":6"},
		"the Task's workspaces, by prefix": {args: []string{"start", "build", "--workspace", "se"}, want: []string{"settings="}, directive: ":6"},
		"the kinds of source":              {args: []string{"start", "build", "-w", "source="}, want: []string{"source=emptyDir", "source=pvc:", "source=configmap:", "source=secret:"}, directive: ":6"},
		"the kinds of source, by prefix":   {args: []string{"start", "build", "-w", "source=p"}, want: []string{"source=pvc:"}, directive: ":6"},
		"no Task, no workspaces":           {args: []string{"start", "nope", "-w", ""}, directive: ":6"},
		"ServiceAccounts":                  {args: []string{"start", "build", "--serviceaccount", ""}, want: []string{"builder", "deployer"}, directive: ":4"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"__complete", tc.args[0], "--kubeconfig", env.Kubeconfig, "-n", h.NS, "--cache-dir", h.cacheDir}, tc.args[1:]...)
			got := h.execute(t, args)
			want := strings.Join(append(tc.want, tc.directive), "\n") + "\n"
			if diff := cmp.Diff(want, got.Stdout); diff != "" || got.Code != 0 {
				t.Errorf("__complete %v: code %d (-want +got):\n%s", tc.args, got.Code, diff)
			}
		})
	}
}
