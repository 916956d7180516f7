//go:build e2e && e2enode

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestNodeChained runs chained Pods of many steps on the real node, each
// step printing when its command starts and ends, and holds status.steps to
// what the steps printed: every step's startedAt no later than its printed
// start, its finishedAt no earlier than its printed end (to the second, as
// the API's times are), the steps one at a time and in order; and, after a
// failing step, that no later step ran at all.
func TestNodeChained(t *testing.T) {
	c := newNodeCluster(t, "node-chained")
	startNodeManager(t, c)

	tests := []struct {
		name string
		// steps is how many; failing the one that exits 4 (0: none).
		steps, failing   int
		outcome, message string
	}{
		{name: "ten-steps", steps: 10, outcome: "True/Succeeded", message: "every step exited 0"},
		{name: "failing-middle-step", steps: 6, failing: 3, outcome: "False/StepFailed", message: `step "s3" exited with code 4`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			task := timedTask(tt.name, tt.steps, tt.failing)
			run := wrappers.TaskRun(ns, tt.name, task.Name).Obj()
			create(t, c, task, run)
			got := waitFinished(t, c, 3*time.Minute, run.Name)[run.Name]
			wantOutcome(t, got, tt.outcome)
			wantMessage(t, got, tt.message)
			wantPodShape(t, c, got, runstate.PodShapeChained, "")
			ran := tt.steps
			if tt.failing > 0 {
				ran = tt.failing
			}
			checkTimedSteps(t, c, got, ran)
			for i := ran + 1; i <= tt.steps; i++ {
				wantNeverRan(t, c, got, fmt.Sprintf("s%d", i))
			}
		})
	}
}

// timedTask is a Task named name of steps s1 to sN, each printing a line
// when its command starts, "start SECONDS UPTIME", and one when it ends,
// "end UPTIME SECONDS": SECONDS the wall clock's, read first at the start
// and last at the end, so that they bound the command to the second as the
// API's times do, and UPTIME the kernel's clock in hundredths, which every
// container shares, to order the steps. Steps sleep 0, 0.3 or 0.6 s, so
// that hand-overs fall anywhere in a second. Step failing (from 1; 0 for
// none) exits 4 after it printed its end.
func timedTask(name string, steps, failing int) *v1.Task {
	const start = `echo "start $(date +%s) $(cut -d' ' -f1 /proc/uptime)"` + "\n"
	const end = `echo "end $(cut -d' ' -f1 /proc/uptime) $(date +%s)"` + "\n"
	list := make([]v1.Step, steps)
	for i := range list {
		script := start + fmt.Sprintf("sleep 0.%d\n", (i%3)*3) + end
		if i+1 == failing {
			script += "exit 4\n"
		}
		list[i] = v1.Step{Name: fmt.Sprintf("s%d", i+1), Image: alpineImage, Script: script}
	}
	return wrappers.Task(ns, name).Steps(list...).Obj()
}

// stepTimes is what a timedTask step printed.
type stepTimes struct {
	// start and end are the wall clock's seconds.
	start, end int64
	// startUp and endUp are the kernel's uptime, in hundredths.
	startUp, endUp int64
}

// checkTimedSteps holds the first n steps of run, a timedTask's, which all
// ran, to what they printed.
func checkTimedSteps(t *testing.T, c *cluster, run *v1.TaskRun, n int) {
	t.Helper()
	var prev *stepTimes
	var prevFinished time.Time
	for i := 0; i < n; i++ {
		status := run.Status.Steps[i]
		printed, err := parseStepTimes(stepLog(t, c, run, status.Name))
		if err != nil {
			t.Errorf("step %s: %v", status.Name, err)
			return
		}
		if status.State != v1.StepTerminated || status.StartedAt == nil || status.FinishedAt == nil {
			t.Errorf("status.steps shows step %s %+v, want it terminated, with its times", status.Name, status)
			return
		}
		if got := status.StartedAt.Unix(); got > printed.start {
			t.Errorf("status.steps says step %s started at %s, after the start it printed (%s)",
				status.Name, status.StartedAt.UTC().Format(time.TimeOnly), time.Unix(printed.start, 0).UTC().Format(time.TimeOnly))
		}
		if got := status.FinishedAt.Unix(); got < printed.end {
			t.Errorf("status.steps says step %s finished at %s, before the end it printed (%s)",
				status.Name, status.FinishedAt.UTC().Format(time.TimeOnly), time.Unix(printed.end, 0).UTC().Format(time.TimeOnly))
		}
		if status.StartedAt.Time.Before(prevFinished) {
			t.Errorf("status.steps says step %s started at %s, before the step before it finished (%s)",
				status.Name, status.StartedAt.UTC().Format(time.TimeOnly), prevFinished.UTC().Format(time.TimeOnly))
		}
		if prev != nil && printed.startUp < prev.endUp {
			t.Errorf("step %s started (uptime %d) before the step before it ended (%d): the steps overlapped",
				status.Name, printed.startUp, prev.endUp)
		}
		prev, prevFinished = &printed, status.FinishedAt.Time
	}
}

// parseStepTimes reads a timedTask step's log.
func parseStepTimes(log string) (stepTimes, error) {
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if len(lines) != 2 {
		return stepTimes{}, fmt.Errorf("it logged %q, want a start and an end line", log)
	}
	start, end := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(start) != 3 || start[0] != "start" || len(end) != 3 || end[0] != "end" {
		return stepTimes{}, fmt.Errorf("it logged %q, want a start and an end line", log)
	}
	var s stepTimes
	var err error
	for _, f := range []struct {
		text string
		to   *int64
	}{{start[1], &s.start}, {start[2], &s.startUp}, {end[1], &s.endUp}, {end[2], &s.end}} {
		if *f.to, err = strconv.ParseInt(strings.Replace(f.text, ".", "", 1), 10, 64); err != nil {
			return stepTimes{}, fmt.Errorf("it logged %q: %w", log, err)
		}
	}
	return s, nil
}
