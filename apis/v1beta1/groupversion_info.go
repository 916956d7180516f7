// Package v1beta1 is the minitask API hub and storage version. The controller
// reads and writes only this version; v1alpha1 is converted to and from it.
//
// +kubebuilder:object:generate=true
// +groupName=minitask.dev
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this package's types.
	GroupVersion = schema.GroupVersion{Group: "minitask.dev", Version: "v1beta1"}

	// SchemeBuilder registers this package's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
