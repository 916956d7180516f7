// Package webhooks registers every minitask webhook with a manager: conversion
// for both kinds, validation of Tasks' params and references, the check that
// a TaskRun's creator may use the ServiceAccount it names and of its params'
// sizes (at release 6's paths and at release 5's, webhooks/validation), the
// guard of the conversion annotation (webhooks/stashguard) for both kinds,
// and the refusal of TaskRun condition times Go cannot read
// (webhooks/conditiontime).
package webhooks

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/webhooks/conditiontime"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/stashguard"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// Options are the manager's flags that change what its webhooks admit.
type Options struct {
	// ServiceAccountUseCheck is --serviceaccount-use-check: a TaskRun naming
	// a ServiceAccount is admitted only if its creator may use it.
	ServiceAccountUseCheck bool
	// ConversionHandler is --conversion-handler: which handler serves
	// /convert (conversion.HandlerMinitask or conversion.HandlerControllerRuntime).
	ConversionHandler string
	// StoredVersions, if set, tells the stash guard when no TaskRun that
	// release 2 stored can remain, so that it need not decode v1 status
	// writes (the manager's storedversions.Watcher); unset, it decodes them.
	StoredVersions stashguard.StoredVersions
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{ServiceAccountUseCheck: true, ConversionHandler: conversion.HandlerMinitask}
}

// SetupWithManager registers the webhooks with DefaultOptions: what the
// test environment serves unless a test asks for other options.
func SetupWithManager(mgr ctrl.Manager) error {
	return SetupWithOptions(mgr, DefaultOptions())
}

// SetupWithOptions registers the conversion and validation webhooks on mgr's
// webhook server, one builder per kind. The manager and the test environment
// both call it, so tests exercise exactly what ships.
func SetupWithOptions(mgr ctrl.Manager, o Options) error {
	// Our conversion handler, registered first: the builders below then find
	// /convert taken and only add their converters to the manager's registry,
	// which the handler converts with. Unregistered, the builders register
	// controller-runtime's handler there, with the same converters.
	switch o.ConversionHandler {
	case conversion.HandlerMinitask, "":
		mgr.GetWebhookServer().Register(conversion.Path, conversion.NewHandler(mgr.GetScheme(), mgr.GetConverterRegistry()))
	case conversion.HandlerControllerRuntime:
	default:
		return fmt.Errorf("unknown conversion handler %q: want %s or %s",
			o.ConversionHandler, conversion.HandlerMinitask, conversion.HandlerControllerRuntime)
	}

	// The validators are v1's, as the webhook configuration asks: the API
	// server converts every other version's writes to v1 for them.
	err := ctrl.NewWebhookManagedBy(mgr, &v1.Task{}).
		WithConverter(conversion.NewTaskConverter).
		WithValidator(validation.TaskValidator{}).
		Complete()
	if err != nil {
		return fmt.Errorf("registering the Task webhooks: %w", err)
	}
	// Registered with the check off too, so that it admits what the
	// installed webhook configuration still sends it.
	runs := validation.TaskRunValidator{Client: mgr.GetClient(), CheckServiceAccountUse: o.ServiceAccountUseCheck}
	err = ctrl.NewWebhookManagedBy(mgr, &v1.TaskRun{}).
		WithConverter(conversion.NewTaskRunConverter).
		WithValidator(runs).
		Complete()
	if err != nil {
		return fmt.Errorf("registering the TaskRun webhooks: %w", err)
	}
	validation.RegisterRelease5Paths(mgr, runs)
	if err := stashguard.Register(mgr, o.StoredVersions); err != nil {
		return fmt.Errorf("registering the conversion annotation's guard: %w", err)
	}
	conditiontime.Register(mgr)
	return nil
}
