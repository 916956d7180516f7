package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/params"
)

// This file builds the one Pod that runs a TaskRun. Everything here is pure, so
// the Pod's shape is tested without an API server.

const (
	// LabelManagedBy marks every Pod that minitask runs; the manager's cache
	// holds only Pods with this label (see CacheOptions).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is LabelManagedBy's value on minitask's Pods.
	ManagedByValue = "minitask"
	// LabelTaskRun names the TaskRun a Pod runs, or a hash-suffixed form of a
	// name too long for a label value.
	LabelTaskRun = "minitask.dev/taskrun"

	// stepContainerPrefix starts the container name of every step: step-NAME.
	stepContainerPrefix = "step-"
	// podNameSuffix ends the name of a run's Pod: RUN-pod.
	podNameSuffix = "-pod"

	// maxNameLength keeps Pod names and label values within one DNS-1123
	// label, the limit of both label values and the Pod's hostname.
	maxNameLength = 63
	// nameHashLength is how many hex digits of a long name's SHA-256 keep
	// truncated names apart: 40 bits, ample within one namespace.
	nameHashLength = 10
)

// podNameFor returns the deterministic name of run's Pod. Being derived from
// the run's name only, it is what makes Pod creation idempotent: a controller
// that crashed between creating the Pod and recording it finds the same name.
func podNameFor(run *v1beta1.TaskRun) string {
	return boundedName(run.Name, podNameSuffix)
}

// taskRunLabelValue returns the value of LabelTaskRun for run.
func taskRunLabelValue(run *v1beta1.TaskRun) string {
	return boundedName(run.Name, "")
}

// boundedName returns name+suffix, or, when that is longer than
// maxNameLength, a prefix of name, a hash of the whole name and suffix, so that
// two long names that share a prefix still differ.
func boundedName(name, suffix string) string {
	if len(name)+len(suffix) <= maxNameLength {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:nameHashLength]
	keep := maxNameLength - len(suffix) - len("-") - nameHashLength
	// A DNS-1123 label may not end in "-" and a subdomain's labels may not
	// end in ".", so the cut must not leave either before the hash.
	prefix := strings.TrimRight(name[:keep], "-.")
	return prefix + "-" + hash + suffix
}

// podLabels returns the labels of run's Pod.
func podLabels(run *v1beta1.TaskRun) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelTaskRun:   taskRunLabelValue(run),
	}
}

// isManaged reports whether pod carries the label that puts it in the cache.
func isManaged(pod *corev1.Pod) bool {
	return pod.Labels[LabelManagedBy] == ManagedByValue
}

// paramValues returns the value of each param that task declares, the run's
// value winning over the Task's default, and the sorted names of the params
// that have neither. Values the Task does not declare are ignored.
func paramValues(task *v1beta1.Task, run *v1beta1.TaskRun) (values map[string]string, missing []string) {
	given := make(map[string]string, len(run.Spec.Params))
	for _, p := range run.Spec.Params {
		given[p.Name] = p.Value
	}
	values = make(map[string]string, len(task.Spec.Params))
	for _, p := range task.Spec.Params {
		switch v, ok := given[p.Name]; {
		case ok:
			values[p.Name] = v
		case p.Default != nil:
			values[p.Name] = *p.Default
		default:
			missing = append(missing, p.Name)
		}
	}
	slices.Sort(missing)
	return values, missing
}

// podForRun returns the Pod that runs task's steps for run, in order: every
// step but the last is an init container, so that the kubelet runs them one
// after another and stops at the first failure; the last is the container.
// The caller sets the owner reference. task must have at least one step,
// which the CRD's schema guarantees.
func podForRun(run *v1beta1.TaskRun, task *v1beta1.Task, values map[string]string, activeDeadlineSeconds *int64) *corev1.Pod {
	containers := make([]corev1.Container, len(task.Spec.Steps))
	for i, step := range task.Spec.Steps {
		containers[i] = containerForStep(step, values)
	}
	last := len(containers) - 1
	var initContainers []corev1.Container
	if last > 0 {
		initContainers = containers[:last]
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      podNameFor(run),
			Namespace: run.Namespace,
			Labels:    podLabels(run),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			InitContainers:        initContainers,
			Containers:            containers[last:],
			ActiveDeadlineSeconds: activeDeadlineSeconds,
		},
	}
}

// containerForStep returns step's container with values substituted into its
// image and script. An empty script runs the image's own entrypoint.
func containerForStep(step v1beta1.Step, values map[string]string) corev1.Container {
	c := corev1.Container{
		Name:  stepContainerPrefix + step.Name,
		Image: params.Substitute(step.Image, values),
	}
	if step.Script != "" {
		c.Command = []string{"/bin/sh", "-c", params.Substitute(step.Script, values)}
	}
	return c
}

// stepNameOf returns the step that a container of a run's Pod runs. A Pod
// started by an earlier release may name its containers otherwise; their
// names are then reported as they are.
func stepNameOf(containerName string) string {
	return strings.TrimPrefix(containerName, stepContainerPrefix)
}

// activeDeadlineFor returns a new Pod's activeDeadlineSeconds: what is left of
// a timeout at now, rounded up so that the Pod never stops before the run's
// deadline, and within the range the API server accepts. It is nil for a run
// without timeout.
func activeDeadlineFor(timeout time.Duration, deadline, now time.Time) *int64 {
	if timeout == 0 {
		return nil
	}
	remaining := math.Ceil(deadline.Sub(now).Seconds())
	return ptr.To(int64(min(max(remaining, 1), math.MaxInt32)))
}

// stoppingDeadline returns the activeDeadlineSeconds that stops a running Pod
// at once: the whole seconds since it started, so that its deadline already
// lies in the past. The API server accepts no value below 1.
func stoppingDeadline(pod *corev1.Pod, now time.Time) int64 {
	elapsed := int64(now.Sub(pod.Status.StartTime.Time).Seconds())
	return max(elapsed, 1)
}

// neverStarted reports whether no step of pod has started, so that stopping
// it loses no logs: the kubelet has not taken it up, or every container still
// waits (for its image, say).
func neverStarted(pod *corev1.Pod) bool {
	if pod.Status.StartTime == nil {
		return true
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if cs.State.Running != nil || cs.State.Terminated != nil {
				return false
			}
		}
	}
	return true
}
