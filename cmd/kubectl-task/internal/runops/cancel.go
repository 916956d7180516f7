package runops

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// FinishedError says that a run has finished, so there is nothing to cancel.
type FinishedError struct {
	// Run is the run as read.
	Run *v1.TaskRun
}

func (e *FinishedError) Error() string {
	return fmt.Sprintf("TaskRun %q has already finished (%s), so there is nothing to cancel", e.Run.Name, runstate.Summary(e.Run))
}

// Cancel asks the run ns/name to stop: it sets spec.status to Cancelled, and
// the controller stops the run's Pod. already is true when a cancel had been
// asked for before. A run that has finished is a *FinishedError; one not
// found, the API server's NotFound; one that kept changing, a Conflict.
func Cancel(ctx context.Context, c client.Client, ns, name string) (already bool, err error) {
	// The patch carries the resourceVersion read, so that a run that finishes
	// between the check and the patch is checked again, not cancelled.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run := &v1.TaskRun{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return err
		}
		if runstate.Finished(run) {
			return &FinishedError{Run: run}
		}
		if runstate.CancelRequested(run) {
			already = true
			return nil
		}
		patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
		run.Spec.Status = v1.TaskRunSpecStatusCancelled
		return c.Patch(ctx, run, patch)
	})
	return already, err
}
