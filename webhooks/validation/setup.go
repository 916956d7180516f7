// Package validation is the validating admission webhook for v1beta1 Tasks. The
// API server converts v1alpha1 requests to v1beta1 before calling it, so it
// guards both versions.
package validation

// Path is where the Task validating webhook is served: the path
// controller-runtime's webhook builder derives for v1beta1 Task, and the one in
// the kubebuilder marker below, from which controller-gen writes the
// ValidatingWebhookConfiguration. Tests hold the three equal.
const Path = "/validate-minitask-dev-v1beta1-task"

// The webhook is registered by webhooks.SetupWithManager on the same builder
// as Task conversion: given a validator but no converter, the builder would
// insist that Task's other versions implement conversion.Convertible.
//
// +kubebuilder:webhook:path=/validate-minitask-dev-v1beta1-task,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=tasks,verbs=create;update,versions=v1beta1,name=vtask-v1beta1.minitask.dev,admissionReviewVersions=v1
