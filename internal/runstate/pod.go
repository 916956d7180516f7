package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file names what minitask creates for a run within Kubernetes' length
// limits: the Pod, its labels and its step containers, and maps step
// containers back to their steps. The controller names them and kubectl task
// reads them, so the two can never disagree.

const (
	// MaxLength is the limit of one DNS-1123 label: of a label value, a
	// container name and a Pod's hostname.
	MaxLength = 63

	// StepContainerPrefix starts the container name of every step: step-NAME.
	StepContainerPrefix = "step-"

	// SidecarContainerPrefix starts the container name of every sidecar:
	// sidecar-NAME (SidecarContainer), a native sidecar (IsNativeSidecar)
	// placed first among the Pod's init containers, in either Pod shape.
	// Release 6 reads such Pods too, so that a run in flight at a rollback
	// finishes.
	SidecarContainerPrefix = "sidecar-"

	// AnnotationSidecarNames is set on a Pod only when a sidecar's name was
	// too long for its container name: the JSON list of the Pod's sidecar
	// names, in the order of its native sidecars.
	AnnotationSidecarNames = "minitask.dev/sidecar-names"

	// AnnotationStepNames is set on a Pod only when a step's name was too long
	// for its container name: the JSON list of the Pod's step names, in the
	// order of its init containers then its container, native sidecars
	// (IsNativeSidecar) left out.
	AnnotationStepNames = "minitask.dev/step-names"

	// LabelManagedBy marks every Pod that minitask runs; the manager's cache
	// holds only Pods with this label.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is LabelManagedBy's value on minitask's Pods.
	ManagedByValue = "minitask"
	// LabelTaskRun names the TaskRun a Pod runs, or a hash-suffixed form of a
	// name too long for a label value.
	LabelTaskRun = "minitask.dev/taskrun"

	// podNameSuffix ends the name of a run's Pod: RUN-pod.
	podNameSuffix = "-pod"
	// retryPodNameSuffix, then the attempt's number, ends the name of the
	// Pod of a retry: RUN-pod-retry1 for the second attempt.
	retryPodNameSuffix = "-pod-retry"

	// hashLength is how many hex digits of a long name's SHA-256 keep
	// shortened names apart: 40 bits, ample within one namespace or Pod.
	hashLength = 10
)

// PodName returns the deterministic name of run's Pod: RUN-pod, shortened with
// a hash when that is too long. Being derived from the run's name only, it is
// what makes Pod creation idempotent: a controller that crashed between
// creating the Pod and recording it finds the same name.
func PodName(run *v1.TaskRun) string {
	return bounded(run.Name, podNameSuffix, MaxLength)
}

// AttemptPodName returns the deterministic name of the Pod of run's attempt
// (0 for the first): PodName for the first, so that runs without retries keep
// the names earlier releases gave their Pods, and RUN-pod-retryN for the
// attempt after N failures, shortened with a hash like PodName. A controller
// that crashed after creating an attempt's Pod but before recording the
// attempt derives the same name from the run's status.attempts, and finds it.
func AttemptPodName(run *v1.TaskRun, attempt int) string {
	if attempt <= 0 {
		return PodName(run)
	}
	return bounded(run.Name, retryPodNameSuffix+strconv.Itoa(attempt), MaxLength)
}

// TaskRunLabelValue returns the value of LabelTaskRun for run: its name, or a
// hash-suffixed form of a name too long for a label value.
func TaskRunLabelValue(run *v1.TaskRun) string {
	return bounded(run.Name, "", MaxLength)
}

// PodLabels returns the labels of run's Pod.
func PodLabels(run *v1.TaskRun) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelTaskRun:   TaskRunLabelValue(run),
	}
}

// IsManaged reports whether pod carries the label that puts it in the
// manager's cache.
func IsManaged(pod *corev1.Pod) bool {
	return pod.Labels[LabelManagedBy] == ManagedByValue
}

// bounded returns name+suffix, or, when that is longer than limit, a prefix of
// name, a hash of the whole name and suffix, so that two long names that share
// a prefix still differ.
func bounded(name, suffix string, limit int) string {
	if len(name)+len(suffix) <= limit {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:hashLength]
	keep := limit - len(suffix) - len("-") - hashLength
	// A DNS-1123 label may not end in "-" and a subdomain's labels may not
	// end in ".", so the cut must not leave either before the hash.
	prefix := strings.TrimRight(name[:keep], "-.")
	return prefix + "-" + hash + suffix
}

// StepContainer returns the name of the container that runs step: step-NAME,
// shortened with a hash when a step name of more than 58 characters (valid:
// step names may have 63) would make it too long.
func StepContainer(step string) string {
	return StepContainerPrefix + bounded(step, "", MaxLength-len(StepContainerPrefix))
}

// StepNamesAnnotation returns the value of AnnotationStepNames for a Pod that
// runs steps, and false when every step's container name holds the step's
// whole name, so that no annotation is needed.
func StepNamesAnnotation(steps []string) (string, bool) {
	for _, s := range steps {
		if StepContainer(s) != StepContainerPrefix+s {
			names, _ := json.Marshal(steps) // a []string always marshals
			return string(names), true
		}
	}
	return "", false
}

// Steps returns, in order, the container of each step pod runs (its init
// containers, then its container) and the step's name. A step's name is read
// from AnnotationStepNames when the Pod has a valid one, else from its
// container name; a Pod started by an earlier release may name its
// containers otherwise, and their names are then reported as they are.
// Native sidecars (IsNativeSidecar) are no steps and are left out: a
// Task's sidecars are first among a Pod's init containers (Sidecars).
func Steps(pod *corev1.Pod) []Step {
	containers := make([]Step, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		if !IsNativeSidecar(c) {
			containers = append(containers, Step{Name: strings.TrimPrefix(c.Name, StepContainerPrefix), Container: c.Name})
		}
	}
	for _, c := range pod.Spec.Containers {
		containers = append(containers, Step{Name: strings.TrimPrefix(c.Name, StepContainerPrefix), Container: c.Name})
	}
	var names []string
	if err := json.Unmarshal([]byte(pod.Annotations[AnnotationStepNames]), &names); err == nil && len(names) == len(containers) {
		for i := range containers {
			containers[i].Name = names[i]
		}
	}
	return containers
}

// IsNativeSidecar reports whether initContainer, one of a Pod's init
// containers, is a native sidecar: restartable (restartPolicy Always), so
// that the kubelet starts it before the init containers after it and keeps
// it running beside them and the Pod's containers, and stops it once they
// have ended. It is judged by its restartPolicy, not its name
// (SidecarContainerPrefix), so that any release's sidecars are told from
// the steps. A regular container's restartPolicy says nothing of the kind.
func IsNativeSidecar(initContainer corev1.Container) bool {
	return initContainer.RestartPolicy != nil && *initContainer.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// NativeSidecars returns the names of pod's native sidecars, in order.
func NativeSidecars(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		if IsNativeSidecar(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// SidecarContainer returns the name of the container that runs sidecar:
// sidecar-NAME, shortened with a hash when a sidecar name of more than 55
// characters (valid: sidecar names may have 63) would make it too long.
func SidecarContainer(sidecar string) string {
	return SidecarContainerPrefix + bounded(sidecar, "", MaxLength-len(SidecarContainerPrefix))
}

// SidecarNamesAnnotation returns the value of AnnotationSidecarNames for a
// Pod that runs sidecars, and false when every sidecar's container name
// holds its whole name, so that no annotation is needed.
func SidecarNamesAnnotation(sidecars []string) (string, bool) {
	for _, s := range sidecars {
		if SidecarContainer(s) != SidecarContainerPrefix+s {
			names, _ := json.Marshal(sidecars) // a []string always marshals
			return string(names), true
		}
	}
	return "", false
}

// Sidecars returns, in order, pod's native sidecars (IsNativeSidecar) as
// Steps: each sidecar's name and container. The name is read from
// AnnotationSidecarNames when the Pod has a valid one, else from its
// container name, sidecar-NAME's NAME (the container's whole name when it
// lacks the prefix).
func Sidecars(pod *corev1.Pod) []Step {
	var sidecars []Step
	for _, c := range pod.Spec.InitContainers {
		if IsNativeSidecar(c) {
			sidecars = append(sidecars, Step{Name: strings.TrimPrefix(c.Name, SidecarContainerPrefix), Container: c.Name})
		}
	}
	var names []string
	if err := json.Unmarshal([]byte(pod.Annotations[AnnotationSidecarNames]), &names); err == nil && len(names) == len(sidecars) {
		for i := range sidecars {
			sidecars[i].Name = names[i]
		}
	}
	return sidecars
}

// Step is one step of a Pod: its name and the container that runs it.
type Step struct {
	Name      string
	Container string
}

// The Pod's shape: how its steps are laid out (docs/lifecycle.md, "The
// Pod"). A Pod without AnnotationPodShape has its steps as init containers,
// the last the container, as every release before the chained shape built
// them.
const (
	// AnnotationPodShape names the shape of a Pod the controller built:
	// PodShapeChained, or PodShapeInitContainers when the chained shape was
	// asked for and the Pod could not have it (AnnotationPodShapeReason
	// says why).
	AnnotationPodShape = "minitask.dev/pod-shape"
	// AnnotationPodShapeReason says why a Pod has init containers although
	// the controller builds chained Pods.
	AnnotationPodShapeReason = "minitask.dev/pod-shape-reason"

	// PodShapeChained: every step a regular container, each waiting for
	// the one before through the Pod's /dev/shm (internal/stepscript).
	PodShapeChained = "chained"
	// PodShapeInitContainers: every step but the last an init container.
	PodShapeInitContainers = "init-containers"

	// SkippedMessage is the termination message of a chained step whose
	// turn never came because a step before it failed: it ran nothing.
	SkippedMessage = `{"skipped":true}`
)

// Chained reports whether pod's steps are chained regular containers.
func Chained(pod *corev1.Pod) bool {
	return pod.Annotations[AnnotationPodShape] == PodShapeChained
}
