package validation

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// TaskRunPath is where the TaskRun validating webhook is served: the path
// controller-runtime's webhook builder derives for v1beta1 TaskRun, and the
// one in the marker below. Tests hold the three equal.
const TaskRunPath = "/validate-minitask-dev-v1beta1-taskrun"

// taskRunResource names TaskRuns in the errors kubectl prints.
var taskRunResource = schema.GroupResource{Group: v1beta1.GroupVersion.Group, Resource: "taskruns"}

// The API server calls this webhook only to create a TaskRun that names a
// ServiceAccount (the match condition), so that every other TaskRun write
// keeps working while the manager is down. Updates need no check: the CRD's
// CEL keeps spec.serviceAccountName as it was created. matchPolicy
// Equivalent sends v1alpha1 creates too, converted to v1beta1, so that a
// ServiceAccount smuggled in the conversion annotation is checked as well.
//
// +kubebuilder:webhook:path=/validate-minitask-dev-v1beta1-taskrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=taskruns,verbs=create,versions=v1beta1,matchPolicy=Equivalent,name=vtaskrun-serviceaccount.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"names-serviceaccount","expression":"has(object.spec) && has(object.spec.serviceAccountName)"}]}`

// The manager asks the API server's authorizer about the TaskRun's creator.
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// TaskRunValidator admits a TaskRun that names a ServiceAccount only if its
// creator may use that ServiceAccount or may create Pods in the namespace:
// otherwise a TaskRun would let anyone who may create runs act as any
// ServiceAccount of the namespace.
type TaskRunValidator struct {
	// Client creates the SubjectAccessReviews that ask the API server's
	// authorizer; the manager's client, whose role grants that.
	Client client.Client
	// CheckServiceAccountUse is --serviceaccount-use-check; false admits
	// every TaskRun.
	CheckServiceAccountUse bool
}

var _ admission.Validator[*v1beta1.TaskRun] = TaskRunValidator{}

// ValidateCreate refuses a new TaskRun naming a ServiceAccount its creator may
// not use. It answers with an error, so the create fails, when the API
// server cannot be asked.
func (v TaskRunValidator) ValidateCreate(ctx context.Context, run *v1beta1.TaskRun) (admission.Warnings, error) {
	if !v.CheckServiceAccountUse || run.Spec.ServiceAccountName == "" {
		return nil, nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("finding who creates TaskRun %q: %w", run.Name, err))
	}
	use := serviceAccountUse{namespace: req.Namespace, name: run.Spec.ServiceAccountName}
	allowed, err := use.allowed(ctx, v.Client, req.UserInfo)
	if err != nil {
		// An internal error, not the review's own status: a Forbidden from
		// the review would read as the creator's refusal.
		return nil, apierrors.NewInternalError(fmt.Errorf("checking whether TaskRun %q may use ServiceAccount %q: %w",
			run.Name, use.name, err))
	}
	log := ctrl.LoggerFrom(ctx).WithValues("user", req.UserInfo.Username, "namespace", use.namespace,
		"serviceAccount", use.name, "allowed", allowed)
	log.V(1).Info("checked the use of a ServiceAccount")
	if allowed {
		return nil, nil
	}
	path := field.NewPath("spec", "serviceAccountName")
	return nil, apierrors.NewForbidden(taskRunResource, run.Name, field.Forbidden(path, use.refusal(req.UserInfo.Username)))
}

// ValidateUpdate allows every update: the CRD keeps spec.serviceAccountName
// as it was when the create was checked.
func (TaskRunValidator) ValidateUpdate(context.Context, *v1beta1.TaskRun, *v1beta1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (TaskRunValidator) ValidateDelete(context.Context, *v1beta1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}
