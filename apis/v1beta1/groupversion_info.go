// Package v1beta1 was the minitask API's storage version in releases 2 to 5,
// and the only version their controller read and wrote. Since release 5 it
// is a spoke: it is converted to and from v1, the hub, directly. Release 6
// stores v1, which its controller reads and writes, and deprecates v1beta1,
// which it still serves.
//
// +kubebuilder:object:generate=true
// +groupName=minitask.dev
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package's types.
	GroupVersion = schema.GroupVersion{Group: "minitask.dev", Version: "v1beta1"}

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
