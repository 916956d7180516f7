//go:build e2e && e2enode

package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestNodePodShapeRehearsal changes the manager's Pod shape under a run in
// flight on the real node, mid-step, both ways (docs/upgrading.md, "Pod
// shapes across releases"): an init-container Pod, which every release
// before the chained shape's default builds, runs to its end under a
// manager that builds chained Pods (the upgrade); a chained Pod runs to its
// end under a manager that builds init containers (the rollback by one
// release, to the release that reads chained Pods but does not build them).
// Each run's steps print once, in order, and status.steps says so. The
// kwok rehearsals (pod_shape_rehearsal_test.go) take release 5's own manager
// across; this one proves, on a real kubelet, what the steps did.
func TestNodePodShapeRehearsal(t *testing.T) {
	c := newNodeCluster(t, "node-shapes")
	// The manager serves the webhooks that admit the Task: one runs from
	// the start, building init containers, as this release does by default.
	m, shape := startManager(t, c, "--pod-shape="+runstate.PodShapeInitContainers), runstate.PodShapeInitContainers
	task := wrappers.Task(ns, "handover").
		Step("first", alpineImage, "echo first ran").
		Step("second", alpineImage, "echo second began; sleep 8; echo second ran").
		Step("third", alpineImage, "echo third ran").Obj()
	create(t, c, task)

	tests := []struct {
		name          string
		before, after string
		// shape is the run's Pod's shape annotation, which it keeps;
		// newShape that of a run created after the change.
		shape, newShape string
	}{
		{name: "upgrade", before: runstate.PodShapeInitContainers, after: runstate.PodShapeChained, newShape: runstate.PodShapeChained},
		{name: "rollback", before: runstate.PodShapeChained, after: runstate.PodShapeInitContainers, shape: runstate.PodShapeChained},
	}
	for _, tt := range tests {
		// One manager at a time, across the cases: no subtests, whose
		// cleanups would stop it.
		if shape != tt.before {
			m.stop()
			m = startManager(t, c, "--pod-shape="+tt.before)
		}
		run := wrappers.TaskRun(ns, "across-"+tt.name, task.Name).Obj()
		create(t, c, run)
		waitLogged(t, c, run, "second", "second began")
		m.stop()
		m, shape = startManager(t, c, "--pod-shape="+tt.after), tt.after

		got := waitFinished(t, c, 2*time.Minute, run.Name)[run.Name]
		wantOutcome(t, got, "True/Succeeded")
		wantPodShape(t, c, got, tt.shape, "")
		for _, step := range []string{"first", "second", "third"} {
			if log := stepLog(t, c, got, step); strings.Count(log, step+" ran") != 1 {
				t.Errorf("%s: step %s logged %q, want %q once", tt.name, step, log, step+" ran")
			}
		}
		checkStepsInOrder(t, got)

		next := wrappers.TaskRun(ns, "after-"+tt.name, task.Name).Obj()
		create(t, c, next)
		got = waitFinished(t, c, 2*time.Minute, next.Name)[next.Name]
		wantOutcome(t, got, "True/Succeeded")
		wantPodShape(t, c, got, tt.newShape, "")
	}
}

// checkStepsInOrder holds run's status.steps, every one of which ran and
// exited 0, to their order: none began before the one before it ended.
func checkStepsInOrder(t *testing.T, run *v1.TaskRun) {
	t.Helper()
	var prev *v1.StepState
	for i := range run.Status.Steps {
		s := &run.Status.Steps[i]
		if s.State != v1.StepTerminated || s.ExitCode == nil || *s.ExitCode != 0 || s.StartedAt == nil || s.FinishedAt == nil {
			t.Errorf("TaskRun %s: step %s is %+v, want it terminated with code 0 and its times", run.Name, s.Name, *s)
			return
		}
		if prev != nil && s.StartedAt.Before(prev.FinishedAt) {
			t.Errorf("TaskRun %s: step %s started at %s, before step %s ended (%s)", run.Name, s.Name, s.StartedAt, prev.Name, prev.FinishedAt)
		}
		prev = s
	}
}
