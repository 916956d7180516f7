// Package wrappers builds, fluently, the objects that tests start from: Tasks
// and TaskRuns of both API versions, and the Pod statuses that tests write in
// the kubelet's place. Each constructor makes the smallest valid object, so
// that a test case reads as what differs from it:
//
//	wrappers.TaskRun(ns, "build-1", "build").Param("target", "all").Timeout(time.Minute).Obj()
//
// Obj returns the wrapped object itself, not a copy.
package wrappers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TaskWrapper builds a v1 Task.
type TaskWrapper struct {
	v1.Task
	metadata[*TaskWrapper]
}

// Task starts a v1 Task with no params and no steps.
func Task(namespace, name string) *TaskWrapper {
	w := &TaskWrapper{Task: v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
	w.metadata = metadata[*TaskWrapper]{w, &w.ObjectMeta}
	return w
}

// Description sets spec.description.
func (w *TaskWrapper) Description(d string) *TaskWrapper {
	w.Spec.Description = d
	return w
}

// Step appends a step.
func (w *TaskWrapper) Step(name, image, script string) *TaskWrapper {
	w.Spec.Steps = append(w.Spec.Steps, v1.Step{Name: name, Image: image, Script: script})
	return w
}

// Steps replaces the steps.
func (w *TaskWrapper) Steps(steps ...v1.Step) *TaskWrapper {
	w.Spec.Steps = steps
	return w
}

// Param declares a param that has no default.
func (w *TaskWrapper) Param(name string) *TaskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1.ParamSpec{Name: name})
	return w
}

// ParamDefault declares a param with a default.
func (w *TaskWrapper) ParamDefault(name, def string) *TaskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1.ParamSpec{Name: name, Default: v1.NewStringValue(def)})
	return w
}

// Params replaces the params' declarations.
func (w *TaskWrapper) Params(params ...v1.ParamSpec) *TaskWrapper {
	w.Spec.Params = params
	return w
}

// Obj returns the Task.
func (w *TaskWrapper) Obj() *v1.Task { return &w.Task }

// TaskRunWrapper builds a v1 TaskRun.
type TaskRunWrapper struct {
	v1.TaskRun
	metadata[*TaskRunWrapper]
}

// TaskRun starts a v1 run of task with no params, the default timeout
// and no status.
func TaskRun(namespace, name, task string) *TaskRunWrapper {
	w := &TaskRunWrapper{TaskRun: v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: task}},
	}}
	w.metadata = metadata[*TaskRunWrapper]{w, &w.ObjectMeta}
	return w
}

// TaskRef sets the name of the Task to run.
func (w *TaskRunWrapper) TaskRef(name string) *TaskRunWrapper {
	w.Spec.TaskRef.Name = name
	return w
}

// Inline gives the run its Task's spec inline, in spec.taskSpec, in place
// of a taskRef.
func (w *TaskRunWrapper) Inline(spec v1.TaskSpec) *TaskRunWrapper {
	w.Spec.TaskRef, w.Spec.TaskSpec = v1.TaskRef{}, &spec
	return w
}

// Pinned sets status.taskSpec, the spec the run's attempts run.
func (w *TaskRunWrapper) Pinned(spec v1.TaskSpec) *TaskRunWrapper {
	w.Status.TaskSpec = &spec
	return w
}

// Param gives a param a value.
func (w *TaskRunWrapper) Param(name, value string) *TaskRunWrapper {
	w.Spec.Params = append(w.Spec.Params, v1.Param{Name: name, Value: *v1.NewStringValue(value)})
	return w
}

// Params replaces the params' values.
func (w *TaskRunWrapper) Params(params ...v1.Param) *TaskRunWrapper {
	w.Spec.Params = params
	return w
}

// Timeout sets spec.timeouts.total.
func (w *TaskRunWrapper) Timeout(d time.Duration) *TaskRunWrapper {
	w.Spec.Timeouts.Total = v1.NewDuration(d)
	return w
}

// TimeoutText sets spec.timeouts.total as a client would write it, e.g. 10m, and
// as the API server's JSON decodes it: keeping the text.
func (w *TaskRunWrapper) TimeoutText(text string) *TaskRunWrapper {
	w.Spec.Timeouts.Total = DurationText(text)
	return w
}

// Cancelled asks for the run to be cancelled.
func (w *TaskRunWrapper) Cancelled() *TaskRunWrapper {
	w.Spec.Status = v1.TaskRunSpecStatusCancelled
	return w
}

// Conditions replaces status.conditions.
func (w *TaskRunWrapper) Conditions(c ...metav1.Condition) *TaskRunWrapper {
	w.Status.Conditions = c
	return w
}

// PodName sets status.podName.
func (w *TaskRunWrapper) PodName(name string) *TaskRunWrapper {
	w.Status.PodName = name
	return w
}

// Started sets status.startTime.
func (w *TaskRunWrapper) Started(t metav1.Time) *TaskRunWrapper {
	w.Status.StartTime = &t
	return w
}

// Completed sets status.completionTime.
func (w *TaskRunWrapper) Completed(t metav1.Time) *TaskRunWrapper {
	w.Status.CompletionTime = &t
	return w
}

// StepStates replaces status.steps.
func (w *TaskRunWrapper) StepStates(s ...v1.StepState) *TaskRunWrapper {
	w.Status.Steps = s
	return w
}

// Obj returns the TaskRun.
func (w *TaskRunWrapper) Obj() *v1.TaskRun { return &w.TaskRun }

// DurationText is a Duration decoded from text, as the API server's JSON
// gives it: it keeps the text, which conversion must carry unchanged.
func DurationText(text string) *v1.Duration {
	d := &v1.Duration{}
	if err := json.Unmarshal([]byte(strconv.Quote(text)), d); err != nil {
		panic(fmt.Sprintf("duration %q: %v", text, err))
	}
	return d
}
