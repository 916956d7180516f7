package wrappers

// This file is the builders of wrappers.go in v1beta1's types, as they were
// before v1 became the storage version: the conversion tests build their
// v1beta1 objects, the spoke a deprecated client writes, with them. Like
// the API's own v1beta1 and v1 types, the two sets are kept apart rather
// than shared: v1beta1 goes once no release serves it, and this file with it.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// BetaTaskWrapper builds a v1beta1 Task.
type BetaTaskWrapper struct {
	v1beta1.Task
	metadata[*BetaTaskWrapper]
}

// BetaTask starts a v1beta1 Task with no params and no steps.
func BetaTask(namespace, name string) *BetaTaskWrapper {
	w := &BetaTaskWrapper{Task: v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
	w.metadata = metadata[*BetaTaskWrapper]{w, &w.ObjectMeta}
	return w
}

// Description sets spec.description.
func (w *BetaTaskWrapper) Description(d string) *BetaTaskWrapper {
	w.Spec.Description = d
	return w
}

// Step appends a step.
func (w *BetaTaskWrapper) Step(name, image, script string) *BetaTaskWrapper {
	w.Spec.Steps = append(w.Spec.Steps, v1beta1.Step{Name: name, Image: image, Script: script})
	return w
}

// Steps replaces the steps.
func (w *BetaTaskWrapper) Steps(steps ...v1beta1.Step) *BetaTaskWrapper {
	w.Spec.Steps = steps
	return w
}

// Param declares a param that has no default.
func (w *BetaTaskWrapper) Param(name string) *BetaTaskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1beta1.ParamSpec{Name: name})
	return w
}

// ParamDefault declares a param with a default.
func (w *BetaTaskWrapper) ParamDefault(name, def string) *BetaTaskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1beta1.ParamSpec{Name: name, Default: &def})
	return w
}

// Params replaces the params' declarations.
func (w *BetaTaskWrapper) Params(params ...v1beta1.ParamSpec) *BetaTaskWrapper {
	w.Spec.Params = params
	return w
}

// Obj returns the Task.
func (w *BetaTaskWrapper) Obj() *v1beta1.Task { return &w.Task }

// BetaTaskRunWrapper builds a v1beta1 TaskRun.
type BetaTaskRunWrapper struct {
	v1beta1.TaskRun
	metadata[*BetaTaskRunWrapper]
}

// BetaTaskRun starts a v1beta1 run of task with no params, the default timeout
// and no status.
func BetaTaskRun(namespace, name, task string) *BetaTaskRunWrapper {
	w := &BetaTaskRunWrapper{TaskRun: v1beta1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: task}},
	}}
	w.metadata = metadata[*BetaTaskRunWrapper]{w, &w.ObjectMeta}
	return w
}

// TaskRef sets the name of the Task to run.
func (w *BetaTaskRunWrapper) TaskRef(name string) *BetaTaskRunWrapper {
	w.Spec.TaskRef.Name = name
	return w
}

// Param gives a param a value.
func (w *BetaTaskRunWrapper) Param(name, value string) *BetaTaskRunWrapper {
	w.Spec.Params = append(w.Spec.Params, v1beta1.Param{Name: name, Value: value})
	return w
}

// Params replaces the params' values.
func (w *BetaTaskRunWrapper) Params(params ...v1beta1.Param) *BetaTaskRunWrapper {
	w.Spec.Params = params
	return w
}

// Timeout sets spec.timeout.
func (w *BetaTaskRunWrapper) Timeout(d time.Duration) *BetaTaskRunWrapper {
	w.Spec.Timeout = v1beta1.NewDuration(d)
	return w
}

// TimeoutText sets spec.timeout as a client would write it, e.g. 10m, and
// as the API server's JSON decodes it: keeping the text.
func (w *BetaTaskRunWrapper) TimeoutText(text string) *BetaTaskRunWrapper {
	w.Spec.Timeout = BetaDurationText(text)
	return w
}

// Cancelled asks for the run to be cancelled.
func (w *BetaTaskRunWrapper) Cancelled() *BetaTaskRunWrapper {
	w.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
	return w
}

// Conditions replaces status.conditions.
func (w *BetaTaskRunWrapper) Conditions(c ...metav1.Condition) *BetaTaskRunWrapper {
	w.Status.Conditions = c
	return w
}

// PodName sets status.podName.
func (w *BetaTaskRunWrapper) PodName(name string) *BetaTaskRunWrapper {
	w.Status.PodName = name
	return w
}

// Started sets status.startTime.
func (w *BetaTaskRunWrapper) Started(t metav1.Time) *BetaTaskRunWrapper {
	w.Status.StartTime = &t
	return w
}

// Completed sets status.completionTime.
func (w *BetaTaskRunWrapper) Completed(t metav1.Time) *BetaTaskRunWrapper {
	w.Status.CompletionTime = &t
	return w
}

// StepStates replaces status.steps.
func (w *BetaTaskRunWrapper) StepStates(s ...v1beta1.StepState) *BetaTaskRunWrapper {
	w.Status.Steps = s
	return w
}

// Obj returns the TaskRun.
func (w *BetaTaskRunWrapper) Obj() *v1beta1.TaskRun { return &w.TaskRun }

// BetaDurationText is a Duration decoded from text, as the API server's JSON
// gives it: it keeps the text, which conversion must carry unchanged.
func BetaDurationText(text string) *v1beta1.Duration {
	d := &v1beta1.Duration{}
	if err := json.Unmarshal([]byte(strconv.Quote(text)), d); err != nil {
		panic(fmt.Sprintf("duration %q: %v", text, err))
	}
	return d
}

// This file holds the builders for the fields release 3 added to v1beta1:
// results, workspaces, a run's ServiceAccount, Pod template and labels. Step fields
// (command, env, resources, ...) are set on the v1beta1.Step given to Steps.

// Results declares results, in order, after those declared before.
func (w *BetaTaskWrapper) Results(names ...string) *BetaTaskWrapper {
	for _, name := range names {
		w.Spec.Results = append(w.Spec.Results, v1beta1.ResultDeclaration{Name: name})
	}
	return w
}

// Workspace declares a workspace mounted at its default path.
func (w *BetaTaskWrapper) Workspace(name string) *BetaTaskWrapper {
	w.Spec.Workspaces = append(w.Spec.Workspaces, v1beta1.WorkspaceDeclaration{Name: name})
	return w
}

// Workspaces replaces the declared workspaces.
func (w *BetaTaskWrapper) Workspaces(ws ...v1beta1.WorkspaceDeclaration) *BetaTaskWrapper {
	w.Spec.Workspaces = ws
	return w
}

// Workspace appends a workspace binding.
func (w *BetaTaskRunWrapper) Workspace(binding v1beta1.WorkspaceBinding) *BetaTaskRunWrapper {
	w.Spec.Workspaces = append(w.Spec.Workspaces, binding)
	return w
}

// ServiceAccount sets spec.serviceAccountName.
func (w *BetaTaskRunWrapper) ServiceAccount(name string) *BetaTaskRunWrapper {
	w.Spec.ServiceAccountName = name
	return w
}

// PodTemplate sets spec.podTemplate.
func (w *BetaTaskRunWrapper) PodTemplate(t v1beta1.PodTemplate) *BetaTaskRunWrapper {
	w.Spec.PodTemplate = &t
	return w
}

// Label sets one of the run's labels.
func (w *BetaTaskRunWrapper) Label(key, value string) *BetaTaskRunWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[key] = value
	return w
}
