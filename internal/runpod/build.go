package runpod

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
)

// This file builds the one Pod that runs a TaskRun: its steps' containers,
// labels and annotations, ServiceAccount and Pod template. volumes.go adds the
// workspaces' and the results' volumes, steptemplate.go the stepTemplate's
// defaults, security.go the settings of restricted namespaces.

// maxPodText is the most bytes that the texts of a run's Pod in which
// references are replaced (images, scripts, commands, args, working
// directories, env values) may hold once params and workspace paths are
// expanded (the API's Limits). A short reference repeated in every step and a
// long value multiply: a Pod past this size would be refused by the API
// server (at 3 MiB a request) or by etcd (1.5 MiB an object), and building it
// could take the manager's memory.
const maxPodText = 1 << 20

// TooLargeError says that a run's Pod would pass maxPodText: Build returns
// it, and no Pod, for a run whose params make it so.
type TooLargeError struct {
	// size is what the Pod's expanded texts would hold, counted without
	// building them.
	size, limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("with its params and workspace paths expanded, the Pod's images, scripts, commands, args, working directories and env values would hold %d bytes, over the limit of %d bytes (1 MiB)", e.size, e.limit)
}

// Inputs is what a run's Pod is built from besides the run and its Task: the
// facts the controller read or worked out for this attempt, as of now.
type Inputs struct {
	// Name is the Pod's name: the run's current attempt's.
	Name string
	// Params are the values of the Task's params (runstate.ParamValues).
	Params params.Values
	// ActiveDeadlineSeconds bounds the Pod by what is left of the run's
	// timeout; nil for none.
	ActiveDeadlineSeconds *int64
	// Restricted says that the run's namespace enforces the restricted Pod
	// Security level (EnforcesRestricted), as it did when the Pod was built.
	Restricted bool
	// NodeLostTolerationSeconds, if set, is how long the Pod tolerates the
	// NoExecute taints of a node that is not ready or unreachable before the
	// taint manager evicts it: the manager's --node-lost-timeout
	// (nodefault.TolerationSeconds). nil leaves the cluster's defaults.
	NodeLostTolerationSeconds *int64
	// Chained asks for the chained shape (the manager's --pod-shape): every
	// step a regular container that waits for the one before. A Task of one
	// step has the same Pod either way; a Task the chained shape cannot run
	// as it promises gets init containers, and the Pod says why.
	Chained bool
	// PodLevelResources says that the API server keeps a Pod's
	// spec.resources (the PodLevelResources feature), which a chained Pod
	// needs when more than one step requests a resource
	// (NeedsPodLevelResources).
	PodLevelResources bool
	// NotChained, when set, is why this Pod may not be chained although
	// Chained asks for it: the namespace's LimitRange refused the chained
	// Pod's containers' zero requests, say. The Pod has init containers,
	// and says why.
	NotChained string
}

// Build returns the Pod that runs task's steps for run, in order. As init
// containers, every step but the last is an init container, so that the
// kubelet runs them one after another and stops at the first failure; the
// last is the container. Chained (in.Chained, shape.go), every step is a
// container, whose wrapper waits for the step before it. Either way, the
// Task's sidecars come first among the init containers, as native sidecars
// (sidecars.go). Every step and sidecar mounts every workspace. The caller sets the owner reference.
// task must have at least one step, which the CRD's schema guarantees. A Pod
// whose texts would pass maxPodText once references are replaced is a
// *TooLargeError, found by counting: no more than maxPodText bytes of it
// are ever built.
func Build(run *v1.TaskRun, task *v1.Task, in Inputs) (*corev1.Pod, error) {
	values := in.Params
	values.Workspaces, values.Results = runstate.WorkspacePaths(task), runstate.ResultPaths(task)
	budget := params.NewBudget(maxPodText)
	mounts := append(workspaceMounts(task), resultsMounts(task)...)
	protocol := stepscript.ProtocolFor(task)
	shape := podShape{}
	if in.Chained && len(task.Spec.Steps) > 1 {
		shape.reason = in.NotChained
		if shape.reason == "" {
			shape.reason = fallbackReason(task, in.PodLevelResources)
		}
		shape.chained = shape.reason == ""
	}
	containers := make([]corev1.Container, len(task.Spec.Steps))
	stepNames := make([]string, len(task.Spec.Steps))
	for i, step := range task.Spec.Steps {
		timer := stepTimer(step)
		wrap := func(script string) []string { return stepscript.Command(script, step.OnError, timer, protocol) }
		if shape.chained {
			wrap = func(script string) []string {
				return stepscript.ChainedCommand(script, step.OnError, timer, protocol, i+1, len(task.Spec.Steps))
			}
		}
		containers[i] = containerForStep(withTemplate(step, task.Spec.StepTemplate), values, wrap, budget)
		containers[i].VolumeMounts = slices.Clone(mounts)
		stepNames[i] = step.Name
	}
	if budget.Exceeded() {
		return nil, &TooLargeError{size: budget.Used(), limit: budget.Limit()}
	}
	sidecars := sidecarContainers(task, values, budget, workspaceMounts(task), startupBound(run, in.ActiveDeadlineSeconds))
	if budget.Exceeded() {
		return nil, &TooLargeError{size: budget.Used(), limit: budget.Limit()}
	}
	last := len(containers) - 1
	initContainers := sidecars
	if last > 0 && !shape.chained {
		initContainers, containers = append(initContainers, containers[:last]...), containers[last:]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      in.Name,
			Namespace: run.Namespace,
			Labels:    podLabels(run),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			InitContainers:        initContainers,
			Containers:            containers,
			Volumes:               append(workspaceVolumes(task, run), resultsVolumes(task)...),
			ActiveDeadlineSeconds: in.ActiveDeadlineSeconds,
		},
	}
	applyServiceAccount(&pod.Spec, run.Spec.ServiceAccountName)
	applyPodTemplate(&pod.Spec, run.Spec.PodTemplate)
	applyNodeLostTolerations(&pod.Spec, in.NodeLostTolerationSeconds)
	if in.Restricted {
		applyRestricted(&pod.Spec)
	}
	if shape.chained {
		applyPodLevelRequests(&pod.Spec, task)
	}
	pod.Annotations = podAnnotations(task, stepNames, shape)
	if names, needed := runstate.SidecarNamesAnnotation(sidecarNames(task)); needed {
		annotate(pod, runstate.AnnotationSidecarNames, names)
	}
	if version, ok := runstate.TaskVersionOf(task); ok && runstate.NeedsTask(run) {
		// The run pins this Task's spec at its next status write.
		annotate(pod, runstate.AnnotationTaskVersion, version.String())
	}
	return pod, nil
}

// annotate sets pod's annotation key to value.
func annotate(pod *corev1.Pod, key, value string) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[key] = value
}

// podShape is the shape Build gives a Pod: chained, or init containers,
// with the reason when the chained shape was asked for.
type podShape struct {
	chained bool
	reason  string
}

// podAnnotations returns what the controller reads back from the Pod alone,
// nil for nothing: the step names too long for their container names, kept
// whole so that status.steps and kubectl task logs still name the step; the
// Task's results in its order and the containers that write them
// (results.go reads them), so that status.results needs no Task.
func podAnnotations(task *v1.Task, stepNames []string, shape podShape) map[string]string {
	annotations := map[string]string{}
	switch {
	case shape.chained:
		annotations[runstate.AnnotationPodShape] = runstate.PodShapeChained
	case shape.reason != "":
		annotations[runstate.AnnotationPodShape] = runstate.PodShapeInitContainers
		annotations[runstate.AnnotationPodShapeReason] = shape.reason
	}
	if names, needed := runstate.StepNamesAnnotation(stepNames); needed {
		annotations[runstate.AnnotationStepNames] = names
	}
	if names, needed := runstate.NamesAnnotation(runstate.ResultNames(task)); needed {
		annotations[runstate.AnnotationResults] = names
	}
	var scriptSteps []string
	for _, step := range task.Spec.Steps {
		if step.Script != "" {
			scriptSteps = append(scriptSteps, runstate.StepContainer(step.Name))
		}
	}
	if names, needed := runstate.NamesAnnotation(scriptSteps); needed {
		annotations[runstate.AnnotationScriptSteps] = names
	}
	if timeouts, needed := runstate.StepTimeoutsAnnotation(commandStepTimeouts(task)); needed {
		annotations[runstate.AnnotationStepTimeouts] = timeouts
	}
	if len(annotations) == 0 {
		return nil
	}
	return annotations
}

// stepGracePeriod is how long a script step that ran past its timeout has
// between SIGTERM and SIGKILL: the Pod's own grace period, which Build
// leaves at the kubelet's default, so that a step's trap has as long when
// its timeout passes as when its run is cancelled.
const stepGracePeriod = corev1.DefaultTerminationGracePeriodSeconds * time.Second

// stepTimer is the timer of step's wrapper: none without a timeout (or with
// 0s, which is none).
func stepTimer(step v1.Step) stepscript.Timer {
	if step.Timeout == nil || step.Timeout.Duration <= 0 {
		return stepscript.Timer{}
	}
	return stepscript.Timer{Timeout: step.Timeout.Duration, Grace: stepGracePeriod}
}

// commandStepTimeouts returns, by container name, the timeout of each step
// of task that has one and no script: no wrapper enforces it, and the
// controller reads it from the Pod (runstate.AnnotationStepTimeouts).
func commandStepTimeouts(task *v1.Task) map[string]time.Duration {
	var timeouts map[string]time.Duration
	for _, step := range task.Spec.Steps {
		if step.Script != "" || step.Timeout == nil || step.Timeout.Duration <= 0 {
			continue
		}
		if timeouts == nil {
			timeouts = map[string]time.Duration{}
		}
		timeouts[runstate.StepContainer(step.Name)] = step.Timeout.Duration
	}
	return timeouts
}

// podLabels returns the run's labels and the controller's own, which win: the
// cache and the Pod watch find Pods by them.
func podLabels(run *v1.TaskRun) map[string]string {
	labels := make(map[string]string, len(run.Labels)+2)
	maps.Copy(labels, run.Labels)
	maps.Copy(labels, runstate.PodLabels(run))
	return labels
}

// containerForStep returns step's container (its stepTemplate's defaults
// filled in) with references replaced in every text that may hold them,
// each charged to budget. A script runs as /bin/sh -c SCRIPT inside the
// wrapper that wrap gives it, which writes its termination message with the
// Task's results (internal/stepscript); a step without one runs its command
// and args, or the image's entrypoint, untouched. Its security context and
// pull policy are the step's, as they are: a restricted namespace's
// settings are merged under them later (applyRestricted).
func containerForStep(step v1.Step, values params.Values, wrap func(script string) []string, budget *params.Budget) corev1.Container {
	c := corev1.Container{
		Name:       runstate.StepContainer(step.Name),
		Image:      budget.Substitute(step.Image, values),
		Command:    budget.ExpandList(step.Command, values),
		Args:       budget.ExpandList(step.Args, values),
		WorkingDir: budget.Substitute(step.WorkingDir, values),
		Env:        substituteEnv(step.Env, values, budget),
	}
	if step.Script != "" {
		c.Command = wrap(budget.Substitute(step.Script, values))
	}
	for _, from := range step.EnvFrom {
		c.EnvFrom = append(c.EnvFrom, *from.DeepCopy())
	}
	if step.ComputeResources != nil {
		c.Resources = *step.ComputeResources.DeepCopy()
	}
	c.SecurityContext = step.SecurityContext.DeepCopy()
	c.ImagePullPolicy = corev1.PullPolicy(step.ImagePullPolicy)
	return c
}

// substituteEnv returns env with references replaced in each value; a value
// taken from a ConfigMap, a Secret or the Pod is copied as it is.
func substituteEnv(env []corev1.EnvVar, values params.Values, budget *params.Budget) []corev1.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, len(env))
	for i, e := range env {
		out[i] = *e.DeepCopy()
		out[i].Value = budget.Substitute(e.Value, values)
	}
	return out
}

// applyServiceAccount gives the Pod a ServiceAccount token only when the run
// names a ServiceAccount: a step has no business with the API server unless
// the run's creator says so, and the namespace's default ServiceAccount may
// hold permissions the creator never meant to lend the steps.
func applyServiceAccount(spec *corev1.PodSpec, serviceAccountName string) {
	if serviceAccountName == "" {
		spec.AutomountServiceAccountToken = ptr.To(false)
		return
	}
	spec.ServiceAccountName = serviceAccountName
}

// applyPodTemplate copies the run's Pod settings onto spec.
func applyPodTemplate(spec *corev1.PodSpec, template *v1.PodTemplate) {
	if template == nil {
		return
	}
	t := template.DeepCopy()
	spec.NodeSelector = t.NodeSelector
	spec.Tolerations = t.Tolerations
	spec.Affinity = t.Affinity
	spec.SecurityContext = t.SecurityContext
	spec.ImagePullSecrets = t.ImagePullSecrets
	spec.PriorityClassName = t.PriorityClassName
}
