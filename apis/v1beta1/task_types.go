package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskSpec is the list of container steps a Task runs, in order, and the
// params its steps may refer to as $(params.NAME).
type TaskSpec struct {
	// Description says what the Task does.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// Params are the values a TaskRun may, or must, give.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	Params []ParamSpec `json:"params,omitempty"`

	// Steps run one after another; the first failing step stops the run.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	Steps []Step `json:"steps"`
}

// ParamSpec declares a param of a Task.
type ParamSpec struct {
	// Name is how steps refer to the param: $(params.NAME).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_-]*$`
	Name string `json:"name"`

	// Description says what the param is for.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// Default is used when a run gives no value; absent means a run must give one.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Default *string `json:"default,omitempty"`
}

// Step is one container of a Task.
type Step struct {
	// Name identifies the step within its Task; a DNS-1123 label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Image is the container image the step runs; it may use $(params.NAME).
	// +required
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// Script is run as /bin/sh -c SCRIPT; empty runs the image's entrypoint.
	// It may use $(params.NAME).
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Script string `json:"script,omitempty"`
}

// Task is a reusable list of container steps.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=tsk,categories=minitask
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
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

// Hub marks v1beta1 Task as the version every other one converts through.
func (*Task) Hub() {}
