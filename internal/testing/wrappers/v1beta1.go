package wrappers

import (
	"encoding/json"
	"fmt"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// This file gives tests that write through v1beta1, deprecated since v1 is
// stored but still served, the objects the builders above make, in
// v1beta1's types: the two versions share every field but params' types
// and timeouts, which a v1beta1 object holds only as strings and one
// timeout. An object with an array or object param cannot be one; asking
// for it is a test's mistake, and panics.

// V1beta1Task returns task as a v1beta1 Task.
func V1beta1Task(task *v1.Task) *v1beta1.Task {
	out := &v1beta1.Task{}
	sameFields(task, out)
	if task.Kind != "" {
		out.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("Task"))
	}
	return out
}

// V1beta1TaskRun returns run as a v1beta1 TaskRun, its timeouts.total as
// its timeout (a timeouts.pending has no place there, and panics).
func V1beta1TaskRun(run *v1.TaskRun) *v1beta1.TaskRun {
	if run.Spec.Timeouts.Pending != nil {
		panic(fmt.Sprintf("TaskRun %s has timeouts.pending, which v1beta1 cannot hold", run.Name))
	}
	out := &v1beta1.TaskRun{}
	sameFields(run, out)
	if total := run.Spec.Timeouts.Total; total != nil {
		out.Spec.Timeout = &v1beta1.Duration{}
		sameFields(total, out.Spec.Timeout)
	}
	if run.Kind != "" {
		out.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRun"))
	}
	return out
}

// sameFields copies what in and out share, by their JSON: every field of
// the one that the other names the same way.
func sameFields(in, out any) {
	data, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("no v1beta1 form (array or object params?): %v", err))
	}
}
