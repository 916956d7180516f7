package runops

import (
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what a new run takes from an earlier one (rerun, start
// --last, the dashboard's Rerun button).

// RepeatedSpec is the spec a new run of the same work gets from run: all of
// it (Task, params, workspaces, ServiceAccount, Pod template, timeout,
// retries, retryOn, TTL, and any field a later release adds), but for
// spec.status, for a cancel request belongs to the run that was cancelled.
func RepeatedSpec(run *v1.TaskRun) v1.TaskRunSpec {
	spec := run.Spec.DeepCopy()
	spec.Status = ""
	return *spec
}

// RepeatedLabels are run's labels but those the controller sets on what it
// makes (runstate.PodLabels), which name the earlier run, not the new one.
func RepeatedLabels(run *v1.TaskRun) map[string]string {
	labels := maps.Clone(run.Labels)
	for key := range runstate.PodLabels(run) {
		delete(labels, key)
	}
	if len(labels) == 0 {
		return nil
	}
	return labels
}

// MissingParams names the params of task that need a value and get none
// from given.
func MissingParams(task *v1.Task, given []v1.Param) []string {
	var missing []string
	for _, p := range runstate.ResolveParams(task, given) {
		if p.Source == runstate.Missing {
			missing = append(missing, p.Spec.Name)
		}
	}
	return missing
}

// MissingParamsError says that a run would miss values its Task requires:
// it would fail at once (InvalidParams), so it is not created.
type MissingParamsError struct {
	// Task is the Task's name; Missing its params that get no value.
	Task    string
	Missing []string
}

func (e *MissingParamsError) Error() string {
	return fmt.Sprintf("Task %q needs a value for %v", e.Task, e.Missing)
}

// WrongTypeParamsError says that a run's values are not of the types its
// Task now declares (it changed since): the run would end InvalidParams
// at once, so it is not created.
type WrongTypeParamsError struct {
	// Task is the Task's name; Problems say, param by param, what is wrong,
	// in the controller's words (runstate.ParamProblems).
	Task     string
	Problems []string
}

func (e *WrongTypeParamsError) Error() string {
	return fmt.Sprintf("Task %q takes no such values: %s", e.Task, strings.Join(e.Problems, "; "))
}

// WrongTypeParams says, param by param, which values given for task's
// params are not of the type the param declares, as the controller would.
func WrongTypeParams(task *v1.Task, given []v1.Param) []string {
	_, problems := runstate.ParamValues(task, &v1.TaskRun{Spec: v1.TaskRunSpec{Params: given}})
	return problems.WrongType
}

// RerunOf returns a new run, not yet created, of earlier's Task with
// earlier's settings (RepeatedSpec, RepeatedLabels), named name (generated
// when empty). task is the Task as it is now: a value it now requires that
// earlier does not give is a *MissingParamsError, and values no longer of
// their params' types a *WrongTypeParamsError.
func RerunOf(earlier *v1.TaskRun, task *v1.Task, name string) (*v1.TaskRun, error) {
	run := &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: earlier.Namespace, Name: name, Labels: RepeatedLabels(earlier)},
		Spec:       RepeatedSpec(earlier),
	}
	if missing := MissingParams(task, run.Spec.Params); len(missing) > 0 {
		return nil, &MissingParamsError{Task: task.Name, Missing: missing}
	}
	if wrong := WrongTypeParams(task, run.Spec.Params); len(wrong) > 0 {
		return nil, &WrongTypeParamsError{Task: task.Name, Problems: wrong}
	}
	return run, nil
}
