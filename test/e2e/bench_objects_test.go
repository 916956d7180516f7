//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file builds the objects of the memory benchmark as a team that uses
// release 3's fields writes them: Tasks whose steps share workspaces and take
// env (values and valueFrom), envFrom, computeResources and command/args, and
// TaskRuns that bind every kind of workspace source, name a ServiceAccount
// and carry a Pod template and labels. The Pods are written as the
// controller makes them for such runs, so that the manager's cache holds
// what it would hold after running them.

// benchServiceAccount is the ServiceAccount the benchmark's runs name; the
// API server refuses a Pod whose ServiceAccount does not exist.
const benchServiceAccount = "builder"

// benchWorkspaces are the workspaces of the benchmark's Tasks, one for each
// kind of source a run can bind.
var benchWorkspaces = []string{"source", "cache", "settings", "credentials"}

// release3Task is a three-step build Task: a script step, then two steps
// that run a command with args in the source workspace.
func release3Task(name string) *v1.Task {
	declarations := make([]v1.WorkspaceDeclaration, len(benchWorkspaces))
	for i, ws := range benchWorkspaces {
		declarations[i] = v1.WorkspaceDeclaration{Name: ws, Description: "the " + ws + " of the build"}
	}
	declarations[2].ReadOnly = ptr.To(true)
	resources := &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	env := []corev1.EnvVar{
		{Name: "GOFLAGS", Value: "-mod=mod"},
		{Name: "GOCACHE", Value: "$(workspaces.cache.path)/go-build"},
		{Name: "REVISION", Value: "$(params.revision)"},
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
	}
	envFrom := []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}}}
	step := func(name, image string, command, args []string) v1.Step {
		return v1.Step{Name: name, Image: image, Command: command, Args: args,
			WorkingDir: "$(workspaces.source.path)", Env: env, EnvFrom: envFrom, ComputeResources: resources}
	}
	checkout := v1.Step{Name: "checkout", Image: "alpine/git:2.45",
		Script: "git clone --depth=1 https://example.com/repo.git \"$(workspaces.source.path)\"\ngit -C \"$(workspaces.source.path)\" checkout \"$REVISION\"",
		Env:    env[2:]}
	return wrappers.Task(ns, name).Description("builds and tests a Go module").
		ParamDefault("revision", "main").
		Workspaces(declarations...).
		Steps(checkout,
			step("build", "golang:1.26", []string{"go"}, []string{"build", "-trimpath", "./..."}),
			step("test", "golang:1.26", []string{"go"}, []string{"test", "-count=1", "-race", "./..."})).
		Obj()
}

// release3Run is a run of task that binds its four workspaces to a PVC, an
// emptyDir, a ConfigMap and a Secret, runs as benchServiceAccount on a pool
// of build nodes, and carries a team's labels.
func release3Run(name, task string) *v1.TaskRun {
	return wrappers.TaskRun(ns, name, task).
		Label("team", "platform").Label("pipeline", "nightly").
		Workspace(v1.WorkspaceBinding{Name: "source",
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "source-" + task}}).
		Workspace(v1.WorkspaceBinding{Name: "cache", EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("2Gi"))}}).
		Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}}).
		Workspace(v1.WorkspaceBinding{Name: "credentials", Secret: &corev1.SecretVolumeSource{SecretName: "git-credentials"}}).
		ServiceAccount(benchServiceAccount).
		PodTemplate(v1.PodTemplate{
			NodeSelector: map[string]string{"pool": "builds"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "builds", Effect: corev1.TaintEffectNoSchedule},
				{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}}},
				}}},
			}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
		}).
		Param("revision", "v1.2.3").
		Obj()
}

// release3Pod is the Pod the controller makes for run of task: every step
// mounts every workspace, at /workspace/NAME, from the source the run binds;
// references to params and workspaces are replaced; the run's
// ServiceAccount, Pod template and labels are the Pod's.
func release3Pod(run *v1.TaskRun, task *v1.Task) *corev1.Pod {
	references := []string{"$(params.revision)", run.Spec.Params[0].Value.StringVal}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, ws := range task.Spec.Workspaces {
		path := "/workspace/" + ws.Name
		references = append(references, "$(workspaces."+ws.Name+".path)", path)
		mounts = append(mounts, corev1.VolumeMount{Name: "ws-" + ws.Name, MountPath: path, ReadOnly: ptr.Deref(ws.ReadOnly, false)})
		for _, b := range run.Spec.Workspaces {
			if b.Name == ws.Name {
				volumes = append(volumes, corev1.Volume{Name: "ws-" + ws.Name, VolumeSource: corev1.VolumeSource{
					EmptyDir: b.EmptyDir, PersistentVolumeClaim: b.PersistentVolumeClaim, ConfigMap: b.ConfigMap, Secret: b.Secret}})
			}
		}
	}
	replacer := strings.NewReplacer(references...)
	containers := make([]corev1.Container, len(task.Spec.Steps))
	for i, step := range task.Spec.Steps {
		c := corev1.Container{Name: runstate.StepContainer(step.Name), Image: step.Image,
			Command: step.Command, Args: step.Args, WorkingDir: replacer.Replace(step.WorkingDir),
			EnvFrom: step.EnvFrom, VolumeMounts: mounts}
		if step.Script != "" {
			c.Command = []string{"/bin/sh", "-c", replacer.Replace(step.Script)}
		}
		for _, e := range step.Env {
			e.Value = replacer.Replace(e.Value)
			c.Env = append(c.Env, e)
		}
		if step.ComputeResources != nil {
			c.Resources = *step.ComputeResources
		}
		containers[i] = c
	}
	labels := maps.Clone(run.Labels)
	maps.Copy(labels, runstate.PodLabels(run))
	template := run.Spec.PodTemplate
	last := len(containers) - 1
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: runstate.PodName(run), Namespace: run.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "TaskRun",
				Name: run.Name, UID: run.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			InitContainers: containers[:last], Containers: containers[last:], Volumes: volumes,
			ServiceAccountName: run.Spec.ServiceAccountName, AutomountServiceAccountToken: ptr.To(true),
			NodeSelector: template.NodeSelector, Tolerations: template.Tolerations, Affinity: template.Affinity,
			ImagePullSecrets: template.ImagePullSecrets, ActiveDeadlineSeconds: ptr.To[int64](3600)},
	}
}

// createRelease3FinishedRun writes a run of task as the controller leaves it
// once every step succeeded: the run, its Pod bound to node (so that the
// scheduler, which the Pod template's node selector would stop, has nothing
// to do) with the status the kubelet leaves once the Pod has ended
// (endPod), and the run's final status with one state a step.
func createRelease3FinishedRun(c *cluster, name string, task *v1.Task, node string) error {
	ctx := context.Background()
	run := release3Run(name, task.Name)
	if err := c.client.Create(ctx, run); err != nil {
		return fmt.Errorf("creating TaskRun %s: %w", name, err)
	}
	pod := release3Pod(run, task)
	pod.Spec.NodeName = node
	if err := c.client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating the Pod of %s: %w", name, err)
	}
	now := metav1.Now()
	// A merge patch, not an update: kwok may have taken the Pod up already.
	ended := client.MergeFrom(pod.DeepCopy())
	endPod(pod, now)
	if err := c.client.Status().Patch(ctx, pod, ended); err != nil {
		return fmt.Errorf("writing the status of the Pod of %s: %w", name, err)
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Status = v1.TaskRunStatus{PodName: pod.Name, StartTime: &now, CompletionTime: &now,
		Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: string(v1.ReasonSucceeded), Message: "every step exited 0", LastTransitionTime: now}}}
	for _, step := range task.Spec.Steps {
		run.Status.Steps = append(run.Status.Steps, v1.StepState{Name: step.Name, State: v1.StepTerminated,
			Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &now, FinishedAt: &now})
	}
	if err := c.client.Status().Patch(ctx, run, patch); err != nil {
		return fmt.Errorf("writing the status of %s: %w", name, err)
	}
	return nil
}

// endPod gives pod the status the kubelet leaves on a Pod with restart
// policy Never once every container exited 0: Succeeded, its init containers
// and containers terminated (Completed), not ready. kwok's stages leave the
// same after playing each step for a second (hack/kwok/stages), in a status
// write for each: the memory and TTL benchmarks write it at once, in one,
// as kwok would take their 10,000 Pods far longer than the rest of the
// benchmark (the stages' writes compete with the benchmark's own for two
// cores); the burst's floor leaves its Pods to kwok, as the controller's. kwok
// then has nothing to play: no stage matches an ended Pod, and a write of a
// stage it had already queued for the Pod is refused, as a terminated
// container of such a Pod may not run again.
func endPod(pod *corev1.Pod, at metav1.Time) {
	terminated := func(containers []corev1.Container) []corev1.ContainerStatus {
		statuses := make([]corev1.ContainerStatus, len(containers))
		for i, c := range containers {
			statuses[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: at, FinishedAt: at}}}
		}
		return statuses
	}
	condition := func(t corev1.PodConditionType, status corev1.ConditionStatus, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: at}
	}
	pod.Status.Phase, pod.Status.StartTime = corev1.PodSucceeded, &at
	pod.Status.Conditions = []corev1.PodCondition{
		condition(corev1.PodScheduled, corev1.ConditionTrue, ""),
		condition(corev1.PodReadyToStartContainers, corev1.ConditionFalse, ""),
		condition(corev1.PodInitialized, corev1.ConditionTrue, "PodCompleted"),
		condition(corev1.PodReady, corev1.ConditionFalse, "PodCompleted"),
		condition(corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted"),
	}
	pod.Status.InitContainerStatuses = terminated(pod.Spec.InitContainers)
	pod.Status.ContainerStatuses = terminated(pod.Spec.Containers)
}
