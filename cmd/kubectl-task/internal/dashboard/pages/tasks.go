package pages

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/paramtext"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// TasksPage lists Tasks.
type TasksPage struct {
	Layout
	AllNamespaces bool
	Tasks         []TaskRow
}

// TaskRow is a Task in a list.
type TaskRow struct {
	Namespace, Name, URL, Description string
	Params, Steps                     int
	RunsURL                           string
}

// NewTasksPage lists tasks.
func NewTasksPage(l Layout, tasks []v1.Task, allNamespaces bool) TasksPage {
	p := TasksPage{Layout: l.For("Tasks", "tasks"), AllNamespaces: allNamespaces}
	for i := range tasks {
		t := &tasks[i]
		p.Tasks = append(p.Tasks, TaskRow{Namespace: t.Namespace, Name: t.Name, URL: TaskPath(t.Namespace, t.Name),
			Description: firstLine(t.Spec.Description), Params: len(t.Spec.Params), Steps: len(t.Spec.Steps), RunsURL: TaskRunsURL(t.Namespace, t.Name)})
	}
	return p
}

// TaskPage is one Task in detail, with the form that starts a run of it.
type TaskPage struct {
	Layout
	Namespace, Name, Description string
	Params                       []ParamSpecRow
	Workspaces                   []WorkspaceSpecRow
	Results                      []ResultSpecRow
	Steps                        []StepSpecRow
	// Runs are its newest runs; RunsURL lists them all.
	Runs      []RunRow
	RunsTotal int
	RunsURL   string
	// StartURL is where the start form posts.
	StartURL string
}

// ParamSpecRow is a param the Task declares, and the start form's field.
type ParamSpecRow struct {
	Name, Description string
	// Type is the param's type (string, array or object), and Syntax how
	// the form takes a value of it.
	Type, Syntax string
	// Default is the default's text, HasDefault whether there is one.
	Default    string
	HasDefault bool
	// Field is the form field that carries its value: param.NAME.
	Field string
}

// WorkspaceSpecRow is a workspace the Task declares, and the start form's field.
type WorkspaceSpecRow struct {
	Name, Description, MountPath string
	ReadOnly                     bool
	Field                        string
}

// ResultSpecRow is a result the Task declares.
type ResultSpecRow struct{ Name, Description string }

// StepSpecRow is a step of the Task.
type StepSpecRow struct {
	Name, Image, Script, WorkingDir, OnError string
	// Command is command and args, one per line, when the step has them.
	Command []string
	Env     []string
}

// ParamField and WorkspaceField are the start form's field names.
func ParamField(name string) string     { return "param." + name }
func WorkspaceField(name string) string { return "workspace." + name }

// NewTaskPage is task in detail, with runs (newest first, of total).
func NewTaskPage(l Layout, task *v1.Task, runs []*v1.TaskRun, total int, now time.Time) TaskPage {
	p := TaskPage{Layout: l.For("Task "+task.Name, "tasks"), Namespace: task.Namespace, Name: task.Name, Description: task.Spec.Description,
		RunsTotal: total, RunsURL: TaskRunsURL(task.Namespace, task.Name), StartURL: TaskPath(task.Namespace, task.Name) + "/start"}
	for _, ps := range task.Spec.Params {
		row := ParamSpecRow{Name: ps.Name, Description: ps.Description, Type: string(ps.TypeOrDefault()), Field: ParamField(ps.Name)}
		if ps.TypeOrDefault() != v1.ParamTypeString {
			row.Syntax = paramtext.Syntax(ps)
		}
		if ps.Default != nil {
			row.Default, row.HasDefault = paramtext.Text(*ps.Default), true
		}
		p.Params = append(p.Params, row)
	}
	for _, w := range task.Spec.Workspaces {
		p.Workspaces = append(p.Workspaces, WorkspaceSpecRow{Name: w.Name, Description: w.Description, MountPath: runstate.WorkspaceMountPath(w),
			ReadOnly: w.ReadOnly != nil && *w.ReadOnly, Field: WorkspaceField(w.Name)})
	}
	for _, r := range task.Spec.Results {
		p.Results = append(p.Results, ResultSpecRow{r.Name, r.Description})
	}
	for _, s := range task.Spec.Steps {
		row := StepSpecRow{Name: s.Name, Image: s.Image, Script: s.Script, WorkingDir: s.WorkingDir, OnError: string(s.OnError)}
		row.Command = append(append(row.Command, s.Command...), s.Args...)
		for _, e := range s.Env {
			row.Env = append(row.Env, envText(e))
		}
		p.Steps = append(p.Steps, row)
	}
	for _, run := range runs {
		p.Runs = append(p.Runs, NewRunRow(run, now))
	}
	return p
}

// envText is an env variable as NAME=VALUE, or NAME from where its value
// comes: a Secret's key is named, never read.
func envText(e corev1.EnvVar) string {
	switch {
	case e.ValueFrom == nil:
		return e.Name + "=" + e.Value
	case e.ValueFrom.SecretKeyRef != nil:
		return e.Name + " from Secret " + e.ValueFrom.SecretKeyRef.Name + ", key " + e.ValueFrom.SecretKeyRef.Key
	case e.ValueFrom.ConfigMapKeyRef != nil:
		return e.Name + " from ConfigMap " + e.ValueFrom.ConfigMapKeyRef.Name + ", key " + e.ValueFrom.ConfigMapKeyRef.Key
	case e.ValueFrom.FieldRef != nil:
		return e.Name + " from field " + e.ValueFrom.FieldRef.FieldPath
	case e.ValueFrom.ResourceFieldRef != nil:
		return e.Name + " from resource " + e.ValueFrom.ResourceFieldRef.Resource
	}
	return e.Name
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
