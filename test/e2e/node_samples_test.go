//go:build e2e && e2enode

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkSamples applies config/samples, in every API version, as `make run
// NODE=real` does, and reads what each sample's steps really printed: the
// Go program built in a workspace included.
func checkSamples(t *testing.T, c *cluster) {
	ctx := context.Background()
	samples := filepath.Join(c.repo, "config/samples")
	for _, glob := range []string{"*_task*.yaml", "*_taskrun*.yaml"} {
		files, err := filepath.Glob(filepath.Join(samples, glob))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"apply"}
		for _, f := range files {
			if glob == "*_task*.yaml" && strings.Contains(filepath.Base(f), "taskrun") {
				continue
			}
			args = append(args, "-f", f)
		}
		if out, err := c.runKubectl(ctx, args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	type want struct {
		outcome string
		// logs are lines some step printed, by step.
		logs map[string][]string
	}
	wants := map[string]want{
		"hello-run":          {"True/Succeeded", map[string][]string{"say": {"hello"}}},
		"build-and-test-run": {"True/Succeeded", map[string][]string{"build": {"building"}, "test": {"testing"}}},
		"greet-run":          {"True/Succeeded", map[string][]string{"prepare": {"preparing to greet world"}, "say": {"hi, world!"}}},
		"flaky-run":          {"False/StepFailed", map[string][]string{"build": {"building"}, "test": {"testing"}}},
		"greet-cancelled":    {"False/TaskRunCancelled", nil},
		"count-words-run":    {"True/Succeeded", map[string][]string{"count": {"4 words"}}},
		// v1's typed params: one argument per item of the array, its
		// space kept inside the item, and an object's keys.
		"list-files-run": {"True/Succeeded", map[string][]string{
			"list": {"file: main.go\nfile: notes for review.txt\n"},
			"show": {"image: example.org/shop:1.2"},
		}},
		// A real Go toolchain (the golang:1.26 stand-in) built what the
		// fetch step wrote into the workspace.
		"build-from-source-run": {"True/Succeeded", map[string][]string{
			"fetch": {"fetched into /workspace/source"},
			"build": {"main.go", "message.txt", "go: creating new go.mod: module example.com/hello"},
		}},
	}
	names := make([]string, 0, len(wants))
	for name := range wants {
		names = append(names, name)
	}
	got := waitFinished(t, c, 4*time.Minute, names...)
	for name, w := range wants {
		run := got[name]
		if outcome(run) != w.outcome {
			t.Errorf("sample TaskRun %s ended %s (%q), want %s", name, outcome(run), conditionMessage(run), w.outcome)
			continue
		}
		for step, lines := range w.logs {
			log := stepLog(t, c, run, step)
			for _, line := range lines {
				if !strings.Contains(log, line) {
					t.Errorf("sample TaskRun %s: step %q logged %q, which lacks %q", name, step, log, line)
				}
			}
		}
	}
	if msg := conditionMessage(got["flaky-run"]); msg != `step "test" exited with code 3` {
		t.Errorf("sample TaskRun flaky-run's message is %q, want %q", msg, `step "test" exited with code 3`)
	}
}
