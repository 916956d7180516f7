package runops

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Create creates run, named TASK-xxxxx (generated) unless it has a name or
// a prefix to generate one from (a run of a Task file: its Task's name).
// On success run holds what the API server stored, its name included.
func Create(ctx context.Context, c client.Client, run *v1.TaskRun) error {
	if run.Name == "" && run.GenerateName == "" {
		run.GenerateName = run.Spec.TaskRef.Name + "-"
	}
	// An empty list and no list are the same run; keep what is stored as
	// start wrote it before there were lists to merge.
	if len(run.Spec.Params) == 0 {
		run.Spec.Params = nil
	}
	if len(run.Spec.Workspaces) == 0 {
		run.Spec.Workspaces = nil
	}
	return c.Create(ctx, run)
}
