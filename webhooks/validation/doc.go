// Package validation is the validating admission webhooks for v1 Tasks
// (params' types and defaults, and references) and TaskRuns (params'
// sizes, and the use of the ServiceAccount a run names, taskrun.go). The
// API server converts v1alpha1 and v1beta1 requests to v1 before calling
// them, so they guard every version. The paths release 5 served, for
// v1beta1, are served too (release5.go).
package validation

// Path is where the Task validating webhook is served: the path
// controller-runtime's webhook builder derives for v1 Task, and the one in
// the kubebuilder marker below, from which controller-gen writes the
// ValidatingWebhookConfiguration. Tests hold the three equal.
const Path = "/validate-minitask-dev-v1-task"

// The webhook is registered by webhooks.SetupWithManager on the same builder
// as Task conversion: given a validator but no converter, the builder would
// insist that Task's other versions implement conversion.Convertible.
//
// matchPolicy Equivalent has the API server convert v1alpha1 and v1beta1
// writes to v1 for it, their conversion annotation restored, so that a
// Task is judged the same whichever version writes it.
//
// The match condition spares the webhook every update that leaves the spec as
// it is, which TaskValidator would let through anyway (ratcheting): label
// and finalizer edits, and the storage migration's rewrites. Those then need
// no webhook call, and keep working while the webhook is down; writes that
// change a spec still fail closed.
//
// +kubebuilder:webhook:path=/validate-minitask-dev-v1-task,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=tasks,verbs=create;update,versions=v1,matchPolicy=Equivalent,name=vtask-v1.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"spec-changed","expression":"request.operation != 'UPDATE' || object.spec != oldObject.spec"}]}`
