// Package validation is the validating admission webhook for v1beta1 Tasks. The
// API server converts v1alpha1 requests to v1beta1 before calling it, so it
// guards both versions.
package validation

import (
	"fmt"
	"net/http"
	"net/url"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Path is where the Task validating webhook is served: the path
// controller-runtime's webhook builder derives for v1beta1 Task, and the one in
// the kubebuilder marker below, from which controller-gen writes the
// ValidatingWebhookConfiguration. Tests hold the three equal.
const Path = "/validate-minitask-dev-v1beta1-task"

// The marker stands apart from SetupWithManager's doc comment because
// controller-gen reads webhook markers only at package level, never from a
// function's godoc.
//
// +kubebuilder:webhook:path=/validate-minitask-dev-v1beta1-task,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=tasks,verbs=create;update,versions=v1beta1,name=vtask-v1beta1.minitask.dev,admissionReviewVersions=v1

// SetupWithManager serves the Task validating webhook on mgr's webhook server.
//
// It registers the handler itself instead of through ctrl.NewWebhookManagedBy:
// given a validator but no converter, that builder insists that Task's other
// versions implement conversion.Convertible, and fails ("inconvertible types")
// because our converters live in webhooks/conversion, which registers them.
func SetupWithManager(mgr ctrl.Manager) error {
	server := mgr.GetWebhookServer()
	// Register panics on a duplicate path; a second setup is a wiring mistake
	// that should fail the manager's start with an error instead.
	if mux := server.WebhookMux(); mux != nil {
		if _, pattern := mux.Handler(&http.Request{URL: &url.URL{Path: Path}}); pattern == Path {
			return fmt.Errorf("registering Task validation: %s is already served", Path)
		}
	}
	server.Register(Path, admission.WithValidator(mgr.GetScheme(), taskValidator{}))
	return nil
}
