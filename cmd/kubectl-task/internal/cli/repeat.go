package cli

import (
	"context"
	"fmt"
	"io"
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file holds what start --last needs beyond runops' repeat: which
// earlier run is the newest of a Task, and how its settings merge with flags.

// newestRunOf returns the run of Task task created last in ns, by
// creationTimestamp, the later name breaking a tie within one second; nil
// if the Task has none.
func (c *Clients) newestRunOf(ctx context.Context, ns, task string) (*v1.TaskRun, error) {
	runs, err := c.listRuns(ctx, task, client.InNamespace(ns))
	if err != nil {
		return nil, err
	}
	var newest *v1.TaskRun
	for i := range runs {
		run := &runs[i]
		if newest == nil || newest.CreationTimestamp.Before(&run.CreationTimestamp) ||
			(newest.CreationTimestamp.Equal(&run.CreationTimestamp) && run.Name > newest.Name) {
			newest = run
		}
	}
	return newest, nil
}

// mergeParams returns base's params with given's values in their place, and
// given's others after them. Params of base that task no longer declares are
// left out, each with a warning on w: the controller would ignore them, and
// start refuses them.
func mergeParams(w io.Writer, task *v1.Task, from string, base, given []v1.Param) []v1.Param {
	declared := map[string]bool{}
	for _, p := range task.Spec.Params {
		declared[p.Name] = true
	}
	return mergeByName(w, "param", task.Name, from, declared, base, given, func(p v1.Param) string { return p.Name })
}

// mergeWorkspaces is mergeParams for workspace bindings.
func mergeWorkspaces(w io.Writer, task *v1.Task, from string, base, given []v1.WorkspaceBinding) []v1.WorkspaceBinding {
	declared := map[string]bool{}
	for _, ws := range task.Spec.Workspaces {
		declared[ws.Name] = true
	}
	return mergeByName(w, "workspace", task.Name, from, declared, base, given, func(b v1.WorkspaceBinding) string { return b.Name })
}

// mergeByName is base with given's items in place of those of the same
// name, and given's others after them; base's items whose names are not
// declared are left out, with a warning on w unless given replaces them.
func mergeByName[T any](w io.Writer, noun, task, from string, declared map[string]bool, base, given []T, name func(T) string) []T {
	override := make(map[string]T, len(given))
	for _, g := range given {
		override[name(g)] = g
	}
	var out []T
	for _, b := range base {
		n := name(b)
		o, replaced := override[n]
		if !declared[n] {
			if !replaced {
				fmt.Fprintf(w, "warning: TaskRun %s's %s %q is left out: Task %q does not declare it any more\n", from, noun, n, task)
			}
			continue
		}
		if replaced {
			b = o
			delete(override, n)
		}
		out = append(out, b)
	}
	for _, g := range given {
		if _, pending := override[name(g)]; pending {
			out = append(out, g)
		}
	}
	return out
}

// mergeLabels returns base's labels with given's added over them.
func mergeLabels(base, given map[string]string) map[string]string {
	if len(base) == 0 && len(given) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, given)
	return out
}
