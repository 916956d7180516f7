package runstate

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// A run's steps come from one of three places, in this order (API.md,
// "Pinned task spec"; docs/lifecycle.md, "Which spec a run runs"):
// status.taskSpec, the spec its first attempt resolved, which every later
// attempt runs; else its inline spec.taskSpec; else the Task its taskRef
// names, as that Task stands when the run's Pod is created.

// TaskSpecSource says where the spec a run runs comes from.
type TaskSpecSource string

// The places a run's spec comes from.
const (
	// TaskSpecPinned: status.taskSpec, pinned at the run's first Pod.
	TaskSpecPinned TaskSpecSource = "pinned"
	// TaskSpecInline: the run's own spec.taskSpec.
	TaskSpecInline TaskSpecSource = "inline"
	// TaskSpecTask: the Task spec.taskRef names, read when a Pod is created.
	TaskSpecTask TaskSpecSource = "Task"
)

// SpecSource returns where the spec run runs comes from.
func SpecSource(run *v1.TaskRun) TaskSpecSource {
	switch {
	case run.Status.TaskSpec != nil:
		return TaskSpecPinned
	case run.Spec.TaskSpec != nil:
		return TaskSpecInline
	default:
		return TaskSpecTask
	}
}

// NeedsTask reports whether running run needs its Task read: only when
// neither a pinned nor an inline spec says what it runs.
func NeedsTask(run *v1.TaskRun) bool {
	return SpecSource(run) == TaskSpecTask
}

// TaskToRun returns the Task whose spec run runs: one made of its pinned
// or its inline spec, named after the Task its taskRef names (a pinned
// one's) or else after the run, in the run's namespace; else task, the
// Task its taskRef names as read (nil when it is not there). What it
// returns is the run's, or task itself: a caller must not change it.
func TaskToRun(run *v1.TaskRun, task *v1.Task) *v1.Task {
	var spec *v1.TaskSpec
	switch SpecSource(run) {
	case TaskSpecPinned:
		spec = run.Status.TaskSpec
	case TaskSpecInline:
		spec = run.Spec.TaskSpec
	default:
		return task
	}
	name := run.Spec.TaskRef.Name
	if name == "" {
		name = run.Name
	}
	resolved := &v1.Task{Spec: *spec}
	resolved.Name, resolved.Namespace = name, run.Namespace
	return resolved
}
