package runinfo

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what describe and the dashboard's run page list of a run:
// its params with their values, its workspaces with their sources, its
// results; each a row per item, in the Task's order, then what the run gives
// that the Task does not declare.

// Ignored is where a value for a param, or a binding of a workspace, that
// the Task does not declare goes: nowhere, for the controller ignores it.
const Ignored runstate.ParamSource = "ignored: not declared"

// Param is a param as a run sees it: its value and where it came from.
type Param struct {
	Name, Description string
	// Type is the param's type as the Task declares it, else (no Task, or
	// a param it does not declare) the value's own.
	Type v1.ParamType
	// Value is the value the run gets; zero when Source is Missing.
	Value  v1.ParamValue
	Source runstate.ParamSource
	// Default is the Task's default, if it has one.
	Default *v1.ParamValue
}

// valueType is v's type, string for a zero value.
func valueType(v v1.ParamValue) v1.ParamType {
	if v.Type == "" {
		return v1.ParamTypeString
	}
	return v.Type
}

// Params returns the Task's params with the values a run with given gets
// (runstate.ResolveParams), then any values given for params the Task does
// not declare. With no Task (nil: deleted, say), the values given, as the
// run's.
func Params(task *v1.Task, given []v1.Param) []Param {
	var out []Param
	if task == nil {
		for _, p := range given {
			out = append(out, Param{Name: p.Name, Type: valueType(p.Value), Value: p.Value, Source: runstate.FromRun})
		}
		return out
	}
	declared := map[string]bool{}
	for _, p := range runstate.ResolveParams(task, given) {
		declared[p.Spec.Name] = true
		row := Param{Name: p.Spec.Name, Type: p.Spec.TypeOrDefault(),
			Source: p.Source, Description: p.Spec.Description, Default: p.Spec.Default}
		if p.Value != nil {
			row.Value = *p.Value
		}
		out = append(out, row)
	}
	for _, p := range given {
		if !declared[p.Name] {
			out = append(out, Param{Name: p.Name, Type: valueType(p.Value), Value: p.Value, Source: Ignored})
		}
	}
	return out
}

// Where a workspace's volume comes from.
const (
	WorkspaceFromRun      = "run"
	WorkspaceFromUnbound  = "not bound: an emptyDir for the Pod's life"
	WorkspaceFromIgnored  = string(Ignored)
	WorkspaceFromTaskGone = "run (Task unknown)"
)

// Workspace is a workspace of a run: its source in -w's words, where steps
// see it (empty when the Task does not say), and where the binding comes from.
type Workspace struct {
	Name, Source, MountPath, From string
}

// Workspaces returns the Task's workspaces, each with the source the run
// binds it to and its mount path, then the bindings the Task does not
// declare; with no Task, the run's own bindings.
func Workspaces(run *v1.TaskRun, task *v1.Task) []Workspace {
	var rows []Workspace
	if task == nil {
		for _, b := range run.Spec.Workspaces {
			rows = append(rows, Workspace{b.Name, WorkspaceSource(b), "", WorkspaceFromTaskGone})
		}
		return rows
	}
	bound := map[string]v1.WorkspaceBinding{}
	for _, b := range run.Spec.Workspaces {
		bound[b.Name] = b
	}
	for _, w := range task.Spec.Workspaces {
		mount := runstate.WorkspaceMountPath(w)
		if w.ReadOnly != nil && *w.ReadOnly {
			mount += " (read-only)"
		}
		b, ok := bound[w.Name]
		if !ok {
			rows = append(rows, Workspace{w.Name, SourceEmptyDir, mount, WorkspaceFromUnbound})
			continue
		}
		delete(bound, w.Name)
		rows = append(rows, Workspace{w.Name, WorkspaceSource(b), mount, WorkspaceFromRun})
	}
	for _, b := range run.Spec.Workspaces {
		if _, undeclared := bound[b.Name]; undeclared {
			rows = append(rows, Workspace{b.Name, WorkspaceSource(b), "", WorkspaceFromIgnored})
		}
	}
	return rows
}

// Result is a result of a run: the value it handed back, nil while it has
// not (yet).
type Result struct {
	Name  string
	Value *string
}

// Results returns the values the run handed back, in the Task's order as
// the status keeps them; then the results the Task declares that the run
// has not written (yet).
func Results(run *v1.TaskRun, task *v1.Task) []Result {
	var rows []Result
	reported := map[string]bool{}
	for _, r := range run.Status.Results {
		reported[r.Name] = true
		rows = append(rows, Result{r.Name, r.Value})
	}
	if task != nil {
		for _, r := range task.Spec.Results {
			if !reported[r.Name] {
				rows = append(rows, Result{Name: r.Name})
			}
		}
	}
	return rows
}
