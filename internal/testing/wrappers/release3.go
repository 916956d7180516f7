package wrappers

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file holds the builders for the fields release 3 added to v1beta1:
// results, workspaces, a run's ServiceAccount, Pod template and labels. Step fields
// (command, env, resources, ...) are set on the v1.Step given to Steps.

// Results declares results, in order, after those declared before.
func (w *TaskWrapper) Results(names ...string) *TaskWrapper {
	for _, name := range names {
		w.Spec.Results = append(w.Spec.Results, v1.ResultDeclaration{Name: name})
	}
	return w
}

// Workspace declares a workspace mounted at its default path.
func (w *TaskWrapper) Workspace(name string) *TaskWrapper {
	w.Spec.Workspaces = append(w.Spec.Workspaces, v1.WorkspaceDeclaration{Name: name})
	return w
}

// Workspaces replaces the declared workspaces.
func (w *TaskWrapper) Workspaces(ws ...v1.WorkspaceDeclaration) *TaskWrapper {
	w.Spec.Workspaces = ws
	return w
}

// Workspace appends a workspace binding.
func (w *TaskRunWrapper) Workspace(binding v1.WorkspaceBinding) *TaskRunWrapper {
	w.Spec.Workspaces = append(w.Spec.Workspaces, binding)
	return w
}

// ServiceAccount sets spec.serviceAccountName.
func (w *TaskRunWrapper) ServiceAccount(name string) *TaskRunWrapper {
	w.Spec.ServiceAccountName = name
	return w
}

// PodTemplate sets spec.podTemplate.
func (w *TaskRunWrapper) PodTemplate(t v1.PodTemplate) *TaskRunWrapper {
	w.Spec.PodTemplate = &t
	return w
}

// Label sets one of the run's labels.
func (w *TaskRunWrapper) Label(key, value string) *TaskRunWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[key] = value
	return w
}
