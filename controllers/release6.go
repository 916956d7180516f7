package controllers

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/release6"
)

// needsRelease6 is the outcome of a run that this release cannot run: it,
// or its Task, holds what only v1 expresses (stored by release 6 before a
// rollback to this one). It waits, Pending, for a roll forward, which runs
// it; nothing of it is lost meanwhile, for v1 keeps it.
func needsRelease6(run *v1.TaskRun, task *v1.Task) *outcome {
	switch {
	case release6.InStash(run.Annotations):
		return unknown(v1.ReasonPending, "TaskRun %q uses what only v1 expresses (%s): it needs minitask release 6; waiting for a roll forward",
			run.Name, release6.Fields)
	case release6.InStash(task.Annotations):
		return unknown(v1.ReasonPending, "Task %q uses what only v1 expresses (%s): its runs need minitask release 6; waiting for a roll forward",
			task.Name, release6.Fields)
	}
	return nil
}
