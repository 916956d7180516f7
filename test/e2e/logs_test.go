//go:build e2e

package e2e

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStepLogs runs bin/kubectl-task against the local cluster, where kwok
// serves every container's log (hack/kwok/step.log) through the real Pod logs
// API. start --showlog follows a three-step run from its start to its end,
// and logs prints it again: both show each step's lines, in step order. kwok
// never ends a followed log, so this also proves that the plugin ends each
// step's log once its container has ended.
func TestStepLogs(t *testing.T) {
	c := newCluster(t, "logs")
	startManager(t, c)
	create(t, c, wrappers.Task(ns, "three").
		Step("first", "alpine:3", "sleep 2").Step("second", "alpine:3", "sleep 1").Step("third", "alpine:3", "sleep 1").Obj())

	start := time.Now()
	followed := runPlugin(t, c, "start", "three", "--name", "three-1", "--showlog")
	t.Logf("start --showlog took %.1fs:\n%s", time.Since(start).Seconds(), followed)
	printed := runPlugin(t, c, "logs", "three-1")

	logLines := 0
	for _, line := range strings.Split(strings.TrimSpace(readStepLog(t, c)), "\n") {
		if line != "" {
			logLines++
		}
	}
	for what, out := range map[string]string{"start --showlog": followed, "logs": printed} {
		var steps []string
		perStep := map[string]int{}
		for _, line := range strings.Split(out, "\n") {
			name, _, ok := strings.Cut(strings.TrimPrefix(line, "["), "] ")
			if !strings.HasPrefix(line, "[") || !ok {
				continue
			}
			if len(steps) == 0 || steps[len(steps)-1] != name {
				steps = append(steps, name)
			}
			perStep[name]++
		}
		if diff := cmp.Diff([]string{"first", "second", "third"}, steps); diff != "" {
			t.Errorf("%s: steps in the order their lines came (-want +got):\n%s\n%s", what, diff, out)
		}
		for _, name := range slices.Sorted(maps.Keys(perStep)) {
			if perStep[name] != logLines {
				t.Errorf("%s: step %s printed %d lines, want the %d of its log", what, name, perStep[name], logLines)
			}
		}
	}
}

// runPlugin runs bin/kubectl-task (make test-e2e builds it) with args in ns
// and returns its output; it fails the test if the plugin fails.
func runPlugin(t *testing.T, c *cluster, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.repo, "bin", "kubectl-task"), append(args, "-n", ns)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.env["KUBECONFIG"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl task %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// readStepLog returns the log kwok serves for every container.
func readStepLog(t *testing.T, c *cluster) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.repo, "hack", "kwok", "step.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
