// Package v1alpha1 holds the first release's minitask API. It is frozen: it is
// served (deprecated) so that existing clients keep working, and converted to and
// from the v1 hub by the conversion webhook (the v1beta1 hub until release 4).
//
// +kubebuilder:object:generate=true
// +groupName=minitask.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package's types.
	GroupVersion = schema.GroupVersion{Group: "minitask.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a scheme. It is
	// apimachinery's, so that API packages import nothing heavier.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Task{}, &TaskList{}, &TaskRun{}, &TaskRunList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
