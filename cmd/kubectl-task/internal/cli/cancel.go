package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
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
	var already bool
	// The patch carries the resourceVersion read, so that a run that finishes
	// between the check and the patch is checked again, not cancelled.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run, err := c.getRun(ctx, ns, name)
		if err != nil {
			return err
		}
		if runstate.Finished(run) {
			return fmt.Errorf("TaskRun %q has already finished (%s), so there is nothing to cancel; see kubectl task describe %s -n %s",
				name, runstate.Summary(run), name, ns)
		}
		if runstate.CancelRequested(run) {
			already = true
			return nil
		}
		patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
		run.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
		return c.Client.Patch(ctx, run, patch)
	})
	if err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("TaskRun %q kept changing while cancelling it; try again", name)
		}
		return clusterError(err, c.Host)
	}
	if already {
		fmt.Fprintf(p.Streams.Out, "TaskRun %s is already being cancelled\n", name)
		return nil
	}
	fmt.Fprintf(p.Streams.Out, "TaskRun %s cancelled: the controller stops its Pod; see kubectl task describe %s -n %s\n", name, name, ns)
	return nil
}
