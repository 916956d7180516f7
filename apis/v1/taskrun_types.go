package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskRunSpec says which Task to run and how. Only Status may change after
// creation; the API server enforces that. Timeouts are compared by value, so
// that 10m and 10m0s are the same timeout.
//
// +kubebuilder:validation:XValidation:rule="has(self.taskRef) != has(self.taskSpec)",message="exactly one of taskRef and taskSpec must be set"
// +kubebuilder:validation:XValidation:rule="has(self.taskRef) == has(oldSelf.taskRef) && (!has(self.taskRef) || self.taskRef == oldSelf.taskRef)",message="taskRef is immutable",fieldPath=".taskRef"
// +kubebuilder:validation:XValidation:rule="has(self.params) == has(oldSelf.params) && (!has(self.params) || self.params == oldSelf.params)",message="params are immutable",fieldPath=".params"
// +kubebuilder:validation:XValidation:rule="has(self.timeouts) == has(oldSelf.timeouts) && (!has(self.timeouts) || (has(self.timeouts.total) == has(oldSelf.timeouts.total) && (!has(self.timeouts.total) || duration(self.timeouts.total) == duration(oldSelf.timeouts.total)) && has(self.timeouts.pending) == has(oldSelf.timeouts.pending) && (!has(self.timeouts.pending) || duration(self.timeouts.pending) == duration(oldSelf.timeouts.pending))))",message="timeouts are immutable",fieldPath=".timeouts"
// +kubebuilder:validation:XValidation:rule="has(self.workspaces) == has(oldSelf.workspaces) && (!has(self.workspaces) || self.workspaces == oldSelf.workspaces)",message="workspaces are immutable",fieldPath=".workspaces"
// +kubebuilder:validation:XValidation:rule="has(self.serviceAccountName) == has(oldSelf.serviceAccountName) && (!has(self.serviceAccountName) || self.serviceAccountName == oldSelf.serviceAccountName)",message="serviceAccountName is immutable",fieldPath=".serviceAccountName"
// +kubebuilder:validation:XValidation:rule="has(self.podTemplate) == has(oldSelf.podTemplate) && (!has(self.podTemplate) || self.podTemplate == oldSelf.podTemplate)",message="podTemplate is immutable",fieldPath=".podTemplate"
// +kubebuilder:validation:XValidation:rule="has(self.retries) == has(oldSelf.retries) && (!has(self.retries) || self.retries == oldSelf.retries)",message="retries is immutable",fieldPath=".retries"
// +kubebuilder:validation:XValidation:rule="has(self.retryOn) == has(oldSelf.retryOn) && (!has(self.retryOn) || self.retryOn == oldSelf.retryOn)",message="retryOn is immutable",fieldPath=".retryOn"
// +kubebuilder:validation:XValidation:rule="has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished) && (!has(self.ttlSecondsAfterFinished) || self.ttlSecondsAfterFinished == oldSelf.ttlSecondsAfterFinished)",message="ttlSecondsAfterFinished is immutable",fieldPath=".ttlSecondsAfterFinished"
type TaskRunSpec struct {
	// TaskRef names the Task to run; exactly one of taskRef and taskSpec.
	// +optional
	TaskRef TaskRef `json:"taskRef,omitzero"`

	// TaskSpec is the Task to run, inline; exactly one of taskRef and
	// taskSpec. Needs release 7.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="taskSpec is immutable"
	TaskSpec *TaskSpec `json:"taskSpec,omitzero"`

	// Params give values to the Task's params. Values the Task does not
	// declare are ignored.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	Params []Param `json:"params,omitempty"`

	// Timeouts bound the run as a whole and its wait for its first step.
	// +optional
	Timeouts Timeouts `json:"timeouts,omitzero"`

	// Status asks the controller to cancel the run when set to Cancelled.
	// +optional
	Status TaskRunSpecStatus `json:"status,omitempty"`

	// Workspaces bind the Task's workspaces to volumes. A workspace the run
	// does not bind is an emptyDir; a binding the Task does not declare is
	// ignored.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Workspaces []WorkspaceBinding `json:"workspaces,omitempty"`

	// ServiceAccountName is the ServiceAccount the run's Pod runs as. Only
	// then does the Pod get a ServiceAccount token. Its creator must be
	// allowed to use it (see docs/security.md).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// PodTemplate is copied onto the run's Pod.
	// +optional
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`

	// Retries is how many more attempts the run makes after an attempt fails
	// for a reason in retryOn; each attempt is a new Pod. Absent means 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Retries *int32 `json:"retries,omitempty"`

	// RetryOn are the failures that are retried: PodFailed (the default:
	// evicted, node lost, ...) and StepFailed (a step exited non-zero).
	// Timeout and cancellation are never retried.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	RetryOn []RetryReason `json:"retryOn,omitempty"`

	// TTLSecondsAfterFinished is how long after completionTime the
	// controller deletes the finished run, and its Pods. Absent means the
	// manager's --default-ttl-after-finished (0: keep the run). At most
	// 2147483647, int32's largest, which API servers before Kubernetes 1.36
	// do not enforce from the format alone.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// Timeouts bound a run. Each is a Go duration such as 1h30m; absent means
// the manager's default, and 0s no bound.
// +kubebuilder:validation:MinProperties=1
type Timeouts struct {
	// Total bounds the run, counted from status.startTime (v1beta1's
	// timeout). Absent means the manager's --default-timeout.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="total must not be negative"
	Total *Duration `json:"total,omitempty"`

	// Pending bounds the wait before the first step starts (scheduling,
	// image pulls, mounts, configuration, a Task not there yet); past it
	// the run ends False/PendingTimeout, naming what held it. Needs
	// release 6.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="pending must not be negative"
	Pending *Duration `json:"pending,omitempty"`
}

// RetryReason is a failure a run may retry.
// +kubebuilder:validation:Enum=PodFailed;StepFailed
type RetryReason string

// The failures a run may retry.
const (
	// RetryOnPodFailed: the Pod failed for a reason other than a step.
	RetryOnPodFailed RetryReason = "PodFailed"
	// RetryOnStepFailed: a step exited non-zero.
	RetryOnStepFailed RetryReason = "StepFailed"
)

// WorkspaceBinding binds one of a Task's workspaces to exactly one volume
// source.
//
// +kubebuilder:validation:XValidation:rule="[has(self.emptyDir), has(self.persistentVolumeClaim), has(self.configMap), has(self.secret)].filter(x, x).size() == 1",message="exactly one of emptyDir, persistentVolumeClaim, configMap and secret must be set"
type WorkspaceBinding struct {
	// Name is the Task's workspace this binds.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// EmptyDir is a fresh directory that lives as long as the Pod.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`

	// PersistentVolumeClaim is a claim in the run's namespace.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`

	// ConfigMap is a ConfigMap in the run's namespace, mounted as files.
	// +optional
	ConfigMap *corev1.ConfigMapVolumeSource `json:"configMap,omitempty"`

	// Secret is a Secret in the run's namespace, mounted as files.
	// +optional
	Secret *corev1.SecretVolumeSource `json:"secret,omitempty"`
}

// PodTemplate holds the Pod settings a run may choose, copied onto its Pod.
type PodTemplate struct {
	// NodeSelector must match a node's labels for the Pod to run there.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the Pod run on nodes with matching taints.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity constrains the nodes the Pod may run on.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// SecurityContext is the Pod's security context. In a namespace that
	// enforces the restricted Pod Security level, what it leaves unset is
	// filled in so that the Pod is admitted.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`

	// ImagePullSecrets name Secrets in the run's namespace used to pull the
	// steps' images.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// PriorityClassName is the Pod's priority class.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// TaskRef names a Task in the TaskRun's namespace.
type TaskRef struct {
	// Name is the Task's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Param is a run's value for one of its Task's params.
type Param struct {
	// Name is the Task param this value is for.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_-]*$`
	Name string `json:"name"`

	// Value replaces $(params.NAME) in the Task's steps: a value of the
	// param's type, each string at most 64 KiB (checked at admission).
	// +required
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value ParamValue `json:"value"`
}

// TaskRunSpecStatus is a request a user makes of a running TaskRun.
// +kubebuilder:validation:Enum=Cancelled
type TaskRunSpecStatus string

// TaskRunSpecStatusCancelled asks the controller to stop the run.
const TaskRunSpecStatusCancelled TaskRunSpecStatus = "Cancelled"

// TaskRunStatus is the observed state of a TaskRun. Its times are RFC 3339
// with an upper-case T and Z, such as 2024-05-01T10:00:00Z (see
// docs/conversion.md, "Malformed times").
type TaskRunStatus struct {
	// Conditions hold the Succeeded condition, the run's summary. Each
	// lastTransitionTime is an RFC 3339 time with an upper-case T and Z.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// PodName is the Pod that runs the steps.
	// +optional
	PodName string `json:"podName,omitempty"`

	// StartTime is when the run started; the timeout counts from it.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the run finished.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Steps report each step's state, in the Task's order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Steps []StepState `json:"steps,omitempty"`

	// Results are the values the run's steps handed back, in the Task's order.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Results []RunResult `json:"results,omitempty"`

	// Attempts are the run's earlier attempts, oldest first; podName names
	// the current one.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Attempts []Attempt `json:"attempts,omitempty"`

	// TaskSpec is the Task spec the run resolved at its first attempt,
	// which every attempt runs; written once, with the first Pod. Needs
	// release 7.
	// +optional
	TaskSpec *TaskSpec `json:"taskSpec,omitzero"`

	// Sidecars report each sidecar's state, in the Task's order. Needs
	// release 7.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Sidecars []SidecarState `json:"sidecars,omitempty"`
}

// RunResult is the value of one of the Task's results.
type RunResult struct {
	// Name is the Task's result.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// Value is what the steps wrote to the result's file; it may be empty.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Value *string `json:"value,omitempty"`
}

// Attempt reports one earlier attempt of a run.
type Attempt struct {
	// PodName is the attempt's Pod, stopped and kept for its logs.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PodName string `json:"podName,omitempty"`

	// StartTime is when the attempt started.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the attempt failed.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Reason is why the attempt failed: PodFailed or StepFailed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`

	// Message says how the attempt failed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`
}

// StepContainerState is the state of a step's container.
// +kubebuilder:validation:Enum=Waiting;Running;Terminated
type StepContainerState string

// The states of a step's container, as the kubelet reports them.
const (
	StepWaiting    StepContainerState = "Waiting"
	StepRunning    StepContainerState = "Running"
	StepTerminated StepContainerState = "Terminated"
)

// StepState reports one step of a run.
type StepState struct {
	// Name is the step's name in the Task.
	// +required
	Name string `json:"name"`

	// State is the step container's state.
	// +optional
	State StepContainerState `json:"state,omitempty"`

	// ExitCode is set once the step has terminated: any int32, negative
	// too (a Windows NTSTATUS, say), bounded as ttlSecondsAfterFinished is.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	ExitCode *int32 `json:"exitCode,omitempty"`

	// Reason is the container's reason for its state, if any.
	// +optional
	Reason string `json:"reason,omitempty"`

	// StartedAt is when the step's container started.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// FinishedAt is when the step's container finished.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// TaskRun runs a Task once, as one Pod.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tr,categories=minitask
// +kubebuilder:printcolumn:name="Task",type=string,JSONPath=`.spec.taskRef.name`
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].reason`
// +kubebuilder:printcolumn:name="StartTime",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="CompletionTime",type=date,JSONPath=`.status.completionTime`
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

// Hub marks v1 TaskRun as the version every other one converts through.
func (*TaskRun) Hub() {}
