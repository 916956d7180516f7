package runstate

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Release 6 keeps release 7's fields (its v1 types, CRD schema, conversion
// and stash carry them) but cannot run them: it refuses them at admission,
// in every version, and its controller holds Pending a run that needs them
// (one stored by release 7 before a rollback) until a roll forward. Release
// 7 is built a part at a time: this release accepts and runs a Task's
// stepTemplate and a step's securityContext and imagePullPolicy, and still
// refuses, and holds, the fields whose part of release 7 is to come. What
// those fields are is said once, here, for both (API.md, "Release 7").

// Release7Needed is what every message about such a field says.
const Release7Needed = "needs minitask release 7; this release keeps it but cannot run it"

// TaskSpecRelease7Fields returns the path, under path (a Task's spec, or a
// run's taskSpec), of each field of spec that this release keeps but does
// not run yet: the sidecars. (A step's securityContext, imagePullPolicy and
// timeout and the stepTemplate were such fields; this release runs them.)
func TaskSpecRelease7Fields(spec *v1.TaskSpec, path *field.Path) []*field.Path {
	if spec == nil {
		return nil
	}
	var paths []*field.Path
	if len(spec.Sidecars) > 0 {
		paths = append(paths, path.Child("sidecars"))
	}
	return paths
}

// TaskRunRelease7Fields returns the path of each field of run that only
// a later release runs: in its inline spec.taskSpec and its pinned
// status.taskSpec, which release 7 runs, what TaskSpecRelease7Fields lists
// there; and status.sidecars, which only that release's controller writes.
func TaskRunRelease7Fields(run *v1.TaskRun) []*field.Path {
	paths := TaskSpecRelease7Fields(run.Spec.TaskSpec, fieldPathSpec.Child("taskSpec"))
	paths = append(paths, TaskSpecRelease7Fields(run.Status.TaskSpec, fieldPathStatus.Child("taskSpec"))...)
	if len(run.Status.Sidecars) > 0 {
		paths = append(paths, field.NewPath("status", "sidecars"))
	}
	return paths
}

// NeedsRelease7 reports whether running run needs release 7, and names the
// first field that does: one of the run's own (TaskRunRelease7Fields), as
// "spec.taskSpec.sidecars", or else one of the Task it runs, as
// `Task "build" spec.sidecars`.
// task is the Task the run refers to, nil when the run has a pinned or an
// inline spec (TaskToRun) or its Task is not there. The controller leaves
// such a run Pending
// (Release7Message) rather than run it without what it asks for; one that
// already has its Pod (started by release 7 before a rollback) goes on
// through it, as every run in flight does.
func NeedsRelease7(run *v1.TaskRun, task *v1.Task) (field string, needs bool) {
	if paths := TaskRunRelease7Fields(run); len(paths) > 0 {
		return paths[0].String(), true
	}
	if task != nil {
		if paths := TaskSpecRelease7Fields(&task.Spec, fieldPathSpec); len(paths) > 0 {
			return "Task " + strconv.Quote(task.Name) + " " + paths[0].String(), true
		}
	}
	return "", false
}

// Release7Message is the Pending message of a run that NeedsRelease7 holds,
// field being what it named.
func Release7Message(run *v1.TaskRun, field string) string {
	return "TaskRun " + strconv.Quote(run.Name) + " uses " + field + ", which needs minitask release 7; waiting for a roll forward"
}

var (
	fieldPathSpec   = field.NewPath("spec")
	fieldPathStatus = field.NewPath("status")
)
