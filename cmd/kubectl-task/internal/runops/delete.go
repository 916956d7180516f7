package runops

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Delete deletes run, as read, and with it its Pods (in the background).
// The run's UID is a precondition, so that a run made again under the same
// name since it was read is left alone (a Conflict). With dryRun the API
// server checks the deletion, permissions included, and deletes nothing.
func Delete(ctx context.Context, c client.Client, run *v1.TaskRun, dryRun bool) error {
	opts := []client.DeleteOption{
		client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &run.UID},
	}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.Delete(ctx, run, opts...)
}
