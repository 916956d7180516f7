package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types of release 7's Task fields: a step template and sidecars.
// Release 6 keeps them (its schema, its conversion) and refuses them at
// admission, so that a rollback from release 7 prunes none of them
// (API.md, "Release 7").

// PullPolicy is when the kubelet pulls a container's image.
// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
type PullPolicy string

// The pull policies a step or sidecar may ask for.
const (
	// PullAlways pulls the image every time the container starts.
	PullAlways PullPolicy = "Always"
	// PullIfNotPresent pulls the image only when the node lacks it.
	PullIfNotPresent PullPolicy = "IfNotPresent"
	// PullNever never pulls the image: the node must have it.
	PullNever PullPolicy = "Never"
)

// StepTemplate holds what every step of a Task gets unless it says
// otherwise.
type StepTemplate struct {
	// Env sets environment variables in every step; a step's entry of the
	// same name wins.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvFrom sets environment variables in every step from ConfigMaps and
	// Secrets, before the step's own.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// SecurityContext is every step container's security context; a
	// step's own fields win.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// ImagePullPolicy is when every step's image is pulled, unless the
	// step says.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty"`
}

// Sidecar is a container that runs beside a Task's steps: a database, a
// browser or a build daemon they talk to. It runs as the kubelet's native
// sidecar: started, and ready, before the first step, and stopped once the
// last step ends.
//
// Its ports' and probes' numbers are core/v1's int32s, which API servers
// before Kubernetes 1.36 store unchecked: the rules below bound them, so
// that no value a typed decode refuses is ever stored.
//
// +kubebuilder:validation:XValidation:rule="!has(self.script) || (!has(self.command) && !has(self.args))",message="command and args cannot be used with script"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, p.containerPort >= 1 && p.containerPort <= 65535 && (!has(p.hostPort) || (p.hostPort >= 0 && p.hostPort <= 65535)))",message="ports must be from 1 to 65535",fieldPath=".ports"
type Sidecar struct {
	// Name identifies the sidecar within its Task; a DNS-1123 label, not a
	// step's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Image is the container image the sidecar runs.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Image string `json:"image,omitempty"`

	// Script is run as /bin/sh -c SCRIPT; absent runs the command, else
	// the image's entrypoint.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Script string `json:"script,omitempty"`

	// Command replaces the image's entrypoint; not with script.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=65536
	Command []string `json:"command,omitempty"`

	// Args are the arguments to the command, or to the image's
	// entrypoint; not with script.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=65536
	Args []string `json:"args,omitempty"`

	// WorkingDir is the directory the sidecar runs in; absent means the
	// image's.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	WorkingDir string `json:"workingDir,omitempty"`

	// Env sets environment variables in the sidecar's container.
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

	// ComputeResources are the sidecar container's requests and limits.
	// +optional
	ComputeResources *corev1.ResourceRequirements `json:"computeResources,omitempty"`

	// SecurityContext is the sidecar container's security context, merged
	// over what a restricted namespace requires.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// ImagePullPolicy is when the sidecar's image is pulled.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty"`

	// Ports are the ports the sidecar listens on, for the record: the
	// steps reach them on localhost.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Ports []corev1.ContainerPort `json:"ports,omitempty"`

	// ReadinessProbe says when the sidecar is ready; the first step waits
	// for it. Without one, the sidecar is ready once started.
	// +optional
	// +kubebuilder:validation:XValidation:rule="(!has(self.initialDelaySeconds) || (self.initialDelaySeconds >= 0 && self.initialDelaySeconds <= 2147483647)) && (!has(self.timeoutSeconds) || (self.timeoutSeconds >= 0 && self.timeoutSeconds <= 2147483647)) && (!has(self.periodSeconds) || (self.periodSeconds >= 0 && self.periodSeconds <= 2147483647)) && (!has(self.successThreshold) || (self.successThreshold >= 0 && self.successThreshold <= 2147483647)) && (!has(self.failureThreshold) || (self.failureThreshold >= 0 && self.failureThreshold <= 2147483647))",message="a probe's seconds and thresholds must be from 0 to 2147483647"
	// +kubebuilder:validation:XValidation:rule="(!has(self.grpc) || (self.grpc.port >= 1 && self.grpc.port <= 65535)) && (!has(self.httpGet) || type(self.httpGet.port) == string || (self.httpGet.port >= 1 && self.httpGet.port <= 65535)) && (!has(self.tcpSocket) || type(self.tcpSocket.port) == string || (self.tcpSocket.port >= 1 && self.tcpSocket.port <= 65535))",message="a probe's port must be a name or a number from 1 to 65535"
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// StartupProbe says when the sidecar has started.
	// +optional
	// +kubebuilder:validation:XValidation:rule="(!has(self.initialDelaySeconds) || (self.initialDelaySeconds >= 0 && self.initialDelaySeconds <= 2147483647)) && (!has(self.timeoutSeconds) || (self.timeoutSeconds >= 0 && self.timeoutSeconds <= 2147483647)) && (!has(self.periodSeconds) || (self.periodSeconds >= 0 && self.periodSeconds <= 2147483647)) && (!has(self.successThreshold) || (self.successThreshold >= 0 && self.successThreshold <= 2147483647)) && (!has(self.failureThreshold) || (self.failureThreshold >= 0 && self.failureThreshold <= 2147483647))",message="a probe's seconds and thresholds must be from 0 to 2147483647"
	// +kubebuilder:validation:XValidation:rule="(!has(self.grpc) || (self.grpc.port >= 1 && self.grpc.port <= 65535)) && (!has(self.httpGet) || type(self.httpGet.port) == string || (self.httpGet.port >= 1 && self.httpGet.port <= 65535)) && (!has(self.tcpSocket) || type(self.tcpSocket.port) == string || (self.tcpSocket.port >= 1 && self.tcpSocket.port <= 65535))",message="a probe's port must be a name or a number from 1 to 65535"
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`
}

// SidecarState reports one sidecar of a run.
type SidecarState struct {
	// Name is the sidecar's name in the Task.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// State is the sidecar container's state.
	// +optional
	State StepContainerState `json:"state,omitempty"`

	// Ready says whether the sidecar passed its readiness probe (or, with
	// none, has started).
	// +optional
	Ready *bool `json:"ready,omitempty"`

	// RestartCount is how often the kubelet restarted the sidecar.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	RestartCount *int32 `json:"restartCount,omitempty"`

	// ExitCode is set once the sidecar has terminated.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	ExitCode *int32 `json:"exitCode,omitempty"`

	// Reason is the container's reason for its state, if any.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`

	// StartedAt is when the sidecar's container started.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// FinishedAt is when the sidecar's container finished.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}
