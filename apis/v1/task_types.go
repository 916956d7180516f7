package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskSpec is the list of container steps a Task runs, in order, and the
// params its steps may refer to as $(params.NAME).
//
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || self.sidecars.all(s, !self.steps.exists(t, t.name == s.name))",message="a sidecar cannot have a step's name",fieldPath=".sidecars"
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

	// Workspaces are the volumes every step mounts, so that steps share
	// files. A TaskRun binds each to a source; an unbound one is an emptyDir
	// that lives as long as the run's Pod.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Workspaces []WorkspaceDeclaration `json:"workspaces,omitempty"`

	// Results are the values the run hands back in status.results. A step
	// writes a result's value to the file $(results.NAME.path); a Task that
	// declares results must end with a script step.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Results []ResultDeclaration `json:"results,omitempty"`

	// Steps run one after another; the first failing step stops the run.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	Steps []Step `json:"steps"`

	// StepTemplate gives every step defaults; a step's own field wins, and
	// env and envFrom merge by name, the step's entry winning. Needs
	// release 7.
	// +optional
	StepTemplate *StepTemplate `json:"stepTemplate,omitempty"`

	// Sidecars are services that run beside the steps, from before the
	// first step starts until the last one ends. Needs release 7.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Sidecars []Sidecar `json:"sidecars,omitempty"`
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

	// Type is what the param's default and values hold: string (the
	// default), array (of strings) or object (of strings, by the keys its
	// properties declare).
	// +optional
	Type ParamType `json:"type,omitempty"`

	// Properties are the keys of an object param; every default and value
	// gives them all. Only for type object.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=50
	Properties map[string]PropertySpec `json:"properties,omitempty"`

	// Default is used when a run gives no value; absent means a run must
	// give one. A value of the param's type, each string at most 64 KiB
	// (checked at admission).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Default *ParamValue `json:"default,omitempty"`
}

// TypeOrDefault is the param's type, string when it gives none.
func (p *ParamSpec) TypeOrDefault() ParamType {
	if p.Type == "" {
		return ParamTypeString
	}
	return p.Type
}

// WorkspaceDeclaration declares a volume that every step of a Task mounts.
type WorkspaceDeclaration struct {
	// Name is how steps and runs refer to the workspace:
	// $(workspaces.NAME.path); a DNS-1123 label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Description says what the workspace holds.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// MountPath is where every step sees the workspace, an absolute path;
	// absent means /workspace/NAME.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath,omitempty"`

	// ReadOnly mounts the workspace read-only in every step.
	// +optional
	ReadOnly *bool `json:"readOnly,omitempty"`
}

// ResultDeclaration declares a value that a Task's steps hand back.
type ResultDeclaration struct {
	// Name is how steps refer to the result: $(results.NAME.path).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_-]*$`
	Name string `json:"name,omitempty"`

	// Description says what the result holds.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`
}

// OnError says what a failing step does to its run.
// +kubebuilder:validation:Enum=stopAndFail;continue
type OnError string

// The values of a step's onError.
const (
	// OnErrorStopAndFail: a step that exits non-zero fails the run (the default).
	OnErrorStopAndFail OnError = "stopAndFail"
	// OnErrorContinue: the run goes on past the step whatever its code; script steps only.
	OnErrorContinue OnError = "continue"
)

// Step is one container of a Task. It runs its script, or else its command
// and args, or else the image's entrypoint.
//
// +kubebuilder:validation:XValidation:rule="!has(self.script) || (!has(self.command) && !has(self.args))",message="command and args cannot be used with script"
// +kubebuilder:validation:XValidation:rule="!has(self.onError) || self.onError != 'continue' || has(self.script)",message="onError: continue needs a script",fieldPath=".onError"
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

	// Command replaces the image's entrypoint; not with script. Its items
	// may use $(params.NAME) and $(workspaces.NAME.path).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=65536
	Command []string `json:"command,omitempty"`

	// Args are the arguments to the command, or to the image's entrypoint;
	// not with script. Its items may use $(params.NAME) and
	// $(workspaces.NAME.path).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=65536
	Args []string `json:"args,omitempty"`

	// WorkingDir is the directory the step runs in; absent means the
	// image's. It may use $(params.NAME) and $(workspaces.NAME.path).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	WorkingDir string `json:"workingDir,omitempty"`

	// Env sets environment variables in the step's container. A value may
	// use $(params.NAME) and $(workspaces.NAME.path); passing params to a
	// script through env is safe from injection, unlike pasting them in.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvFrom sets environment variables from ConfigMaps and Secrets.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// ComputeResources are the step container's requests and limits.
	// +optional
	ComputeResources *corev1.ResourceRequirements `json:"computeResources,omitempty"`

	// OnError is what the step's failure does: stopAndFail (the default) ends
	// the run; continue (script steps only) lets the run go on, the step's
	// exit code reported with reason Continued.
	// +optional
	OnError OnError `json:"onError,omitempty"`

	// SecurityContext is the step container's security context, over the
	// stepTemplate's, merged over what a restricted namespace requires.
	// Needs release 7.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// ImagePullPolicy is when the step's image is pulled; absent means the
	// stepTemplate's, else the kubelet's default. Needs release 7.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty"`

	// Timeout bounds the step, counted from its command's start: past it
	// the command gets SIGTERM, then SIGKILL, and the run fails
	// StepTimedOut unless onError is continue. A Go duration such as 10m;
	// absent or 0s means no bound but the run's. Needs release 7.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="timeout must not be negative"
	Timeout *Duration `json:"timeout,omitempty"`
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

// Hub marks v1 Task as the version every other one converts through.
func (*Task) Hub() {}
