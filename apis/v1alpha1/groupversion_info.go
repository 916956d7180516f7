// Package v1alpha1 holds the first release's minitask API. It is frozen: it is
// served (deprecated) so that existing clients keep working, and converted to and
// from the v1beta1 hub by the conversion webhook.
//
// +kubebuilder:object:generate=true
// +groupName=minitask.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this package's types.
	GroupVersion = schema.GroupVersion{Group: "minitask.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
