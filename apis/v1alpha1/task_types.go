package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskSpec is the list of container steps a Task runs, in order.
type TaskSpec struct {
	// Steps run one after another; the first failing step stops the run.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	Steps []Step `json:"steps"`
}

// Step is one container of a Task.
type Step struct {
	// Name identifies the step within its Task; a DNS-1123 label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Image is the container image the step runs.
	// +required
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// Script is run as /bin/sh -c SCRIPT; empty runs the image's entrypoint.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Script string `json:"script,omitempty"`
}

// Task is a reusable list of container steps.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tsk,categories=minitask
// +kubebuilder:deprecatedversion:warning="minitask.dev/v1alpha1 Task is deprecated; use minitask.dev/v1 Task"
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TaskSpec `json:"spec"`
}

// TaskList is a list of Tasks.
//
// +kubebuilder:object:root=true
type TaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Task `json:"items"`
}
