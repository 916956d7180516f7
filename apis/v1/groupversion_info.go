// Package v1 is the minitask API's stable version and, from release 5, the
// hub: v1alpha1 and v1beta1 are each converted to and from it directly.
// Release 5 serves it but stores v1beta1 (a version is served for a release
// before it is stored, so that a rollback by one release stays safe).
// Release 6 stores it, and its controller reads and writes only v1.
//
// +kubebuilder:object:generate=true
// +groupName=minitask.dev
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package's types.
	GroupVersion = schema.GroupVersion{Group: "minitask.dev", Version: "v1"}

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
