// Package webhooks registers every minitask webhook with a manager: conversion
// for both kinds and admission validation of v1beta1 Tasks.
package webhooks

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// SetupWithManager registers the conversion and validation webhooks on mgr's
// webhook server. The manager and the test environment both call it, so tests
// exercise exactly what ships.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := conversion.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up conversion webhooks: %w", err)
	}
	if err := validation.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up validation webhooks: %w", err)
	}
	return nil
}
