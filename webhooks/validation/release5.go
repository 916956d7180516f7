package validation

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The paths release 5's ValidatingWebhookConfiguration names, where its
// webhooks took v1beta1 objects. Release 6's configuration names Path and
// TaskRunPath, for v1.
const (
	Release5Path        = "/validate-minitask-dev-v1beta1-task"
	Release5TaskRunPath = "/validate-minitask-dev-v1beta1-taskrun"
)

// RegisterRelease5Paths serves Release5Path and Release5TaskRunPath, each
// judging the v1beta1 object it receives by its v1 form, exactly as Path
// and TaskRunPath judge v1 objects. During an upgrade from release 5, or a
// rollback to it, the webhook configuration of one release meets the
// manager of the other for as long as the rollout takes; a path the
// manager does not serve answers 404, and since the webhooks fail closed,
// every Task write and every TaskRun create they match would be refused
// until the rollout ends. Serving release 5's paths keeps those writes
// working while release 5's configuration calls release 6's manager (a
// rollback in progress, or an upgrade whose configuration has not been
// applied yet). Release 7, which rolls back only to release 6, may drop
// them.
func RegisterRelease5Paths(mgr ctrl.Manager, runs TaskRunValidator) {
	server := mgr.GetWebhookServer()
	server.Register(Release5Path, admission.WithValidator[*v1beta1.Task](mgr.GetScheme(), release5TaskValidator{}))
	server.Register(Release5TaskRunPath, admission.WithValidator[*v1beta1.TaskRun](mgr.GetScheme(), release5TaskRunValidator{runs}))
}

// release5TaskValidator judges a v1beta1 Task by its v1 form, its
// conversion annotation restored, as TaskValidator does.
type release5TaskValidator struct{}

var _ admission.Validator[*v1beta1.Task] = release5TaskValidator{}

// ValidateCreate judges the new Task's v1 form.
func (release5TaskValidator) ValidateCreate(ctx context.Context, task *v1beta1.Task) (admission.Warnings, error) {
	return TaskValidator{}.ValidateCreate(ctx, conversion.V1TaskOf(ctx, task))
}

// ValidateUpdate judges the changed Task's v1 form, unless its v1 spec is
// as it was (ratcheting, as TaskValidator does).
func (release5TaskValidator) ValidateUpdate(ctx context.Context, oldTask, task *v1beta1.Task) (admission.Warnings, error) {
	return TaskValidator{}.ValidateUpdate(ctx, conversion.V1TaskOf(ctx, oldTask), conversion.V1TaskOf(ctx, task))
}

// ValidateDelete allows every deletion.
func (release5TaskValidator) ValidateDelete(context.Context, *v1beta1.Task) (admission.Warnings, error) {
	return nil, nil
}

// release5TaskRunValidator judges a v1beta1 TaskRun by its v1 form, as
// TaskRunValidator does.
type release5TaskRunValidator struct {
	runs TaskRunValidator
}

var _ admission.Validator[*v1beta1.TaskRun] = release5TaskRunValidator{}

// ValidateCreate judges the new TaskRun's v1 form.
func (v release5TaskRunValidator) ValidateCreate(ctx context.Context, run *v1beta1.TaskRun) (admission.Warnings, error) {
	return v.runs.ValidateCreate(ctx, conversion.V1TaskRunOf(ctx, run))
}

// ValidateUpdate allows every update, as TaskRunValidator does.
func (release5TaskRunValidator) ValidateUpdate(context.Context, *v1beta1.TaskRun, *v1beta1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (release5TaskRunValidator) ValidateDelete(context.Context, *v1beta1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}
