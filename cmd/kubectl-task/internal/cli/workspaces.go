package cli

import (
	"strings"

	"github.com/spf13/cobra"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
)

// workspaceFlagHelp is how -w is spelled, for help and errors alike.
const workspaceFlagHelp = runinfo.WorkspaceSyntax

// parseWorkspaces reads the values of -w flags, each NAME=SOURCE, in order.
func parseWorkspaces(cmd *cobra.Command, flags []string) ([]v1.WorkspaceBinding, error) {
	bindings := make([]v1.WorkspaceBinding, 0, len(flags))
	seen := map[string]bool{}
	for _, f := range flags {
		b, err := runinfo.ParseWorkspace(f)
		if err != nil {
			return nil, usageErrorf(cmd, "malformed -w %q: %v", f, err)
		}
		if seen[b.Name] {
			return nil, usageErrorf(cmd, "-w %s is given twice; bind each workspace once", b.Name)
		}
		seen[b.Name] = true
		bindings = append(bindings, b)
	}
	return bindings, nil
}

// checkWorkspaces refuses bindings of workspaces the Task does not declare:
// the controller would ignore them, and the workspace meant (a typo's) would
// silently be an emptyDir.
func checkWorkspaces(cmd *cobra.Command, task *v1.Task, bindings []v1.WorkspaceBinding) error {
	declared := map[string]bool{}
	for _, w := range task.Spec.Workspaces {
		declared[w.Name] = true
	}
	for _, b := range bindings {
		if !declared[b.Name] {
			return usageErrorf(cmd, "Task %q has no workspace %q; %s", task.Name, b.Name, declaredWorkspaces(task))
		}
	}
	return nil
}

// declaredWorkspaces says which workspaces a Task declares, for messages.
func declaredWorkspaces(task *v1.Task) string {
	if len(task.Spec.Workspaces) == 0 {
		return "it declares no workspaces"
	}
	names := make([]string, len(task.Spec.Workspaces))
	for i, w := range task.Spec.Workspaces {
		names[i] = w.Name
	}
	return "its workspaces are: " + strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
