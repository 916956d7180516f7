//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// maxPeakRSSMB is the most resident memory bin/manager may ever have used
// while it refuses param expansion bombs.
const maxPeakRSSMB = 300

// TestParamExpansionBomb runs the bomb through bin/manager: a Task of
// 20 steps whose scripts refer to $(params.x) 1,000 times, and runs that
// give it a 64 KiB value, one per reconcile worker, at once. Expanded, each
// Pod would be 1.3 GB. Every run must end InvalidParams with the size and no
// Pod, and the manager's peak resident memory (VmHWM, which the kernel keeps
// for the whole life of the process) must stay under 300 MB: read every
// 50 ms, the manager killed at once if it passes, so that a regression fails
// fast instead of taking the machine's memory.
func TestParamExpansionBomb(t *testing.T) {
	const bombs = 4 // the manager's default --max-concurrent-reconciles
	c := newCluster(t, "bomb")
	m := startManager(t, c)
	before := peakRSSMB(t, m.cmd.Process.Pid)

	script := strings.Repeat("echo $(params.x)\n", 1000)
	task := wrappers.Task(ns, "bomb").Param("x")
	for i := range 20 {
		task.Step(fmt.Sprintf("step-%d", i), "alpine:3", script)
	}
	create(t, c, task.Obj())
	value := strings.Repeat("y", 64<<10)
	names := runNames("bomb", bombs)
	for _, name := range names {
		create(t, c, wrappers.TaskRun(ns, name, "bomb").Param("x", value).Timeout(5*time.Minute).Obj())
	}

	deadline := time.Now().Add(2 * time.Minute)
	var all map[string]*v1.TaskRun
	for {
		if peak := peakRSSMB(t, m.cmd.Process.Pid); peak > maxPeakRSSMB {
			m.kill()
			t.Fatalf("the manager's peak RSS reached %.0f MB (over %d MB) while expanding the bombs; killed it", peak, maxPeakRSSMB)
		}
		var err error
		if all, err = runs(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, name := range names {
			if run := all[name]; run != nil && runstate.Finished(run) {
				done++
			}
		}
		if done == bombs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bombs finished within 2m", done, bombs)
		}
		time.Sleep(50 * time.Millisecond)
	}

	size := 20 * (len("alpine:3") + len(script) + 1000*(len(value)-len("$(params.x)")))
	want := fmt.Sprintf("with its params and workspace paths expanded, the Pod's images, scripts, commands, args, working directories and env values would hold %d bytes, over the limit of 1048576 bytes (1 MiB); no Pod was created", size)
	for _, name := range names {
		run := all[name]
		if cond := runstate.Succeeded(run); outcome(run) != "False/InvalidParams" || cond.Message != want {
			t.Errorf("run %s: %s %q, want False/InvalidParams %q", name, outcome(run), cond.Message, want)
		}
	}
	pods, err := podsByRun(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if len(pods[name]) > 0 {
			t.Errorf("run %s has Pods %v, want none", name, podNames(pods[name]))
		}
	}
	peak := peakRSSMB(t, m.cmd.Process.Pid)
	t.Logf("manager peak RSS (VmHWM): %.0f MB when ready, %.0f MB after %d bombs of %d bytes each (limit %d MB)",
		before, peak, bombs, size, maxPeakRSSMB)
	if peak > maxPeakRSSMB {
		t.Errorf("the manager's peak RSS was %.0f MB, want under %d MB", peak, maxPeakRSSMB)
	}
}
