package conversion

import (
	"context"

	kjson "sigs.k8s.io/json"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The conversions between the spokes are what the API server asks of the
// webhook when a v1alpha1 client reads or writes what is stored as v1beta1
// (everything until release 6, and after it what its storage migration has
// not rewritten in v1 yet), and when it sends a v1alpha1 write to a webhook
// of v1beta1: each goes through the hub, as NewHubSpokeConverter does. The stash guard
// judges a v1alpha1 write by what they store; the tests of releases 2 to 4,
// written when v1beta1 was the hub, hold them to the same behaviour.

// ConvertAlphaTaskToBeta converts a v1alpha1 Task to v1beta1 through v1.
func ConvertAlphaTaskToBeta(ctx context.Context, src *v1alpha1.Task, dst *v1beta1.Task) error {
	var hub v1.Task
	if err := ConvertTaskToHub(ctx, src, &hub); err != nil {
		return err
	}
	return ConvertBetaTaskFromHub(ctx, &hub, dst)
}

// ConvertBetaTaskToAlpha converts a v1beta1 Task to v1alpha1 through v1.
func ConvertBetaTaskToAlpha(ctx context.Context, src *v1beta1.Task, dst *v1alpha1.Task) error {
	var hub v1.Task
	if err := ConvertBetaTaskToHub(ctx, src, &hub); err != nil {
		return err
	}
	return ConvertTaskFromHub(ctx, &hub, dst)
}

// ConvertAlphaTaskRunToBeta converts a v1alpha1 TaskRun to v1beta1 through v1.
func ConvertAlphaTaskRunToBeta(ctx context.Context, src *v1alpha1.TaskRun, dst *v1beta1.TaskRun) error {
	var hub v1.TaskRun
	if err := ConvertTaskRunToHub(ctx, src, &hub); err != nil {
		return err
	}
	return ConvertBetaTaskRunFromHub(ctx, &hub, dst)
}

// ConvertBetaTaskRunToAlpha converts a v1beta1 TaskRun to v1alpha1 through v1.
func ConvertBetaTaskRunToAlpha(ctx context.Context, src *v1beta1.TaskRun, dst *v1alpha1.TaskRun) error {
	var hub v1.TaskRun
	if err := ConvertBetaTaskRunToHub(ctx, src, &hub); err != nil {
		return err
	}
	return ConvertTaskRunFromHub(ctx, &hub, dst)
}

// DecodeV1Task decodes a v1 Task's JSON as the API server's decoder does
// and converts it to v1beta1, what release 5 stores.
func DecodeV1Task(ctx context.Context, raw []byte) (*v1beta1.Task, error) {
	var hub v1.Task
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &hub); err != nil {
		return nil, err
	}
	beta := &v1beta1.Task{}
	return beta, ConvertBetaTaskFromHub(ctx, &hub, beta)
}

// DecodeV1TaskRun decodes a v1 TaskRun's JSON as the API server's decoder
// does and converts it to v1beta1, what release 5 stores.
func DecodeV1TaskRun(ctx context.Context, raw []byte) (*v1beta1.TaskRun, error) {
	var hub v1.TaskRun
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &hub); err != nil {
		return nil, err
	}
	beta := &v1beta1.TaskRun{}
	return beta, ConvertBetaTaskRunFromHub(ctx, &hub, beta)
}

// V1TaskOf is task's v1 form.
func V1TaskOf(ctx context.Context, task *v1beta1.Task) *v1.Task {
	hub := &v1.Task{}
	_ = ConvertBetaTaskToHub(ctx, task, hub) // never fails
	return hub
}

// V1TaskRunOf is run's v1 form.
func V1TaskRunOf(ctx context.Context, run *v1beta1.TaskRun) *v1.TaskRun {
	hub := &v1.TaskRun{}
	_ = ConvertBetaTaskRunToHub(ctx, run, hub) // never fails
	return hub
}
