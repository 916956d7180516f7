package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runops"
)

func (p *plugin) newCancelCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run that has not finished",
		Long: `Cancel a run: set its spec.status to Cancelled. The controller then stops the
run's Pod, keeping its logs readable, and the run ends as Failed(TaskRunCancelled).
A run that has already finished cannot be cancelled.`,
		Example:           `  kubectl task cancel greet-x7k2p`,
		Args:              exactlyOne("the name of a run"),
		ValidArgsFunction: p.completeRuns(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.runCancel(cmd.Context(), args[0])
		},
	}
}

func (p *plugin) runCancel(ctx context.Context, name string) error {
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	already, err := runops.Cancel(ctx, c.Client, ns, name)
	var finished *runops.FinishedError
	switch {
	case errors.As(err, &finished):
		return fmt.Errorf("%s; see kubectl task describe %s -n %s", finished.Error(), name, ns)
	case apierrors.IsNotFound(err):
		return runNotFoundError(ns, name)
	case apierrors.IsConflict(err):
		return fmt.Errorf("TaskRun %q kept changing while cancelling it; try again", name)
	case err != nil:
		return clusterError(err, c.Host)
	}
	if already {
		fmt.Fprintf(p.Streams.Out, "TaskRun %s is already being cancelled\n", name)
		return nil
	}
	fmt.Fprintf(p.Streams.Out, "TaskRun %s cancelled: the controller stops its Pod; see kubectl task describe %s -n %s\n", name, name, ns)
	return nil
}
