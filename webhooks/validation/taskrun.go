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

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TaskRunPath is where the TaskRun validating webhook is served: the path
// controller-runtime's webhook builder derives for v1 TaskRun, and the
// one in the marker below. Tests hold the three equal.
const TaskRunPath = "/validate-minitask-dev-v1-taskrun"

// taskRunResource and taskRunGroupKind name TaskRuns in the errors kubectl prints.
var (
	taskRunResource  = schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "taskruns"}
	taskRunGroupKind = schema.GroupKind{Group: v1.GroupVersion.Group, Kind: "TaskRun"}
)

// The API server calls this webhook only to create a TaskRun that names a
// ServiceAccount, one with a param's string long enough that it might
// pass MaxValueBytes, or one that gives its Task's spec inline, which is
// checked as a Task's spec is (the match conditions), so that every other
// TaskRun write keeps working while the manager is down. The path is
// release 6's: adding a condition changes no path that release serves. The bound counts
// characters, which CEL counts, and each takes at most 4 bytes in UTF-8:
// a string of more than MaxValueBytes bytes has more than MaxValueBytes/4
// characters. Updates need no check: the CRD's CEL keeps spec as it was
// created. matchPolicy Equivalent sends v1alpha1 and v1beta1 creates too,
// converted to v1, so that a ServiceAccount or a value smuggled in the
// conversion annotation is checked as well. A value of the wrong type for
// its param is no refusal here: the run's Task may not exist yet, and the
// controller ends such a run InvalidParams.
//
// +kubebuilder:webhook:path=/validate-minitask-dev-v1-taskrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=taskruns,verbs=create,versions=v1,matchPolicy=Equivalent,name=vtaskrun-serviceaccount.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"names-serviceaccount-or-long-value","expression":"has(object.spec) && (has(object.spec.serviceAccountName) || has(object.spec.taskSpec) || has(object.spec.params) && object.spec.params.exists(p, has(p.value) && (type(p.value) == string ? size(p.value) > 16384 : type(p.value) == list ? p.value.exists(s, type(s) == string && size(s) > 16384) : type(p.value) == map && p.value.exists(k, type(p.value[k]) == string && size(p.value[k]) > 16384))))"}]}`

// The manager asks the API server's authorizer about the TaskRun's creator.
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// TaskRunValidator admits a TaskRun that names a ServiceAccount only if its
// creator may use that ServiceAccount or may create Pods in the namespace:
// otherwise a TaskRun would let anyone who may create runs act as any
// ServiceAccount of the namespace. It refuses a param's string longer
// than MaxValueBytes, which v1's schemaless values leave to admission.
type TaskRunValidator struct {
	// Client creates the SubjectAccessReviews that ask the API server's
	// authorizer; the manager's client, whose role grants that.
	Client client.Client
	// CheckServiceAccountUse is --serviceaccount-use-check; false admits
	// every ServiceAccount a TaskRun names (its values' sizes are still
	// checked).
	CheckServiceAccountUse bool
}

var _ admission.Validator[*v1.TaskRun] = TaskRunValidator{}

// ValidateCreate refuses a new TaskRun with a param's string longer than
// MaxValueBytes, an inline spec.taskSpec that a Task's spec could not be
// (TaskValidator's checks, each error under spec.taskSpec), or naming a ServiceAccount its creator may not use. It
// answers with an error, so the create fails, when the API server cannot
// be asked.
func (v TaskRunValidator) ValidateCreate(ctx context.Context, run *v1.TaskRun) (admission.Warnings, error) {
	var errs field.ErrorList
	for i := range run.Spec.Params {
		errs = append(errs, validateValueSize(field.NewPath("spec", "params").Index(i).Child("value"), &run.Spec.Params[i].Value)...)
	}
	if run.Spec.TaskSpec != nil {
		errs = append(errs, validateTaskSpec(run.Spec.TaskSpec, field.NewPath("spec", "taskSpec"))...)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(taskRunGroupKind, run.Name, errs)
	}
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
func (TaskRunValidator) ValidateUpdate(context.Context, *v1.TaskRun, *v1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (TaskRunValidator) ValidateDelete(context.Context, *v1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}
