package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskRunSpec names the Task to run.
type TaskRunSpec struct {
	// TaskRef is the name of a Task in the same namespace. It cannot change
	// after creation.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="taskRef is immutable"
	TaskRef string `json:"taskRef"`
}

// TaskRunPhase is where a TaskRun is in its life.
// +kubebuilder:validation:Enum="";Pending;Running;Succeeded;Failed
type TaskRunPhase string

// The phases of a TaskRun. The empty phase means the controller has not seen it yet.
const (
	TaskRunPhaseNone      TaskRunPhase = ""
	TaskRunPhasePending   TaskRunPhase = "Pending"
	TaskRunPhaseRunning   TaskRunPhase = "Running"
	TaskRunPhaseSucceeded TaskRunPhase = "Succeeded"
	TaskRunPhaseFailed    TaskRunPhase = "Failed"
)

// TaskRunStatus is the observed state of a TaskRun. Its times are RFC 3339
// with an upper-case T and Z, such as 2024-05-01T10:00:00Z (see
// docs/conversion.md, "Malformed times").
type TaskRunStatus struct {
	// Phase summarises the run.
	// +optional
	Phase TaskRunPhase `json:"phase,omitempty"`

	// PodName is the Pod that runs the steps.
	// +optional
	PodName string `json:"podName,omitempty"`

	// StartTime is when the run started.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// FinishTime is when the run finished.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// TaskRun runs a Task once, as one Pod.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tr,categories=minitask
// +kubebuilder:deprecatedversion:warning="minitask.dev/v1alpha1 TaskRun is deprecated; use minitask.dev/v1 TaskRun"
// +kubebuilder:printcolumn:name="Task",type=string,JSONPath=`.spec.taskRef`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TaskRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TaskRunSpec `json:"spec"`
	// +optional
	Status TaskRunStatus `json:"status,omitempty"`
}

// TaskRunList is a list of TaskRuns.
//
// +kubebuilder:object:root=true
type TaskRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TaskRun `json:"items"`
}
