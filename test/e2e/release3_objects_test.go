//go:build e2e

package e2e

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file holds release 3's fixtures: a Task and runs that use every field
// release 3 added to v1beta1, and what they refer to (a ServiceAccount, a
// ConfigMap, a Secret, a bound PersistentVolumeClaim, a PriorityClass), so
// that the runs' Pods are admitted and scheduled in the local cluster.

// Release 3's objects, created through v1beta1 once the current release runs.
const (
	r3Task = "r3-build"
	r3Done = "r3-done" // every new run field; succeeds
	r3Long = "r3-long" // every new run field; runs for long; a v1alpha1 writer fails it

	r3Account   = "builder"
	r3Settings  = "r3-settings" // ConfigMap: a workspace, envFrom and an env valueFrom
	r3Creds     = "r3-creds"    // Secret: a workspace, envFrom and an env valueFrom
	r3Cache     = "r3-cache"    // PersistentVolume and its claim, bound to each other
	r3Priority  = "r3-builds"
	r3PullCreds = "r3-registry" // an image pull Secret; nothing pulls in the local cluster
)

// r3Dependencies are the objects release 3's runs refer to. The
// claim is bound to its volume from the start (volumeName and claimRef), so
// that kube-controller-manager marks both Bound and the scheduler places
// the Pods without a provisioner.
func r3Dependencies() []client.Object {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	storage := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(r3Account)},
		&corev1.ConfigMap{ObjectMeta: meta(r3Settings), Data: map[string]string{"GOFLAGS": "-mod=mod"}},
		&corev1.Secret{ObjectMeta: meta(r3Creds), StringData: map[string]string{"token": "not-a-secret"}},
		&corev1.Secret{ObjectMeta: meta(r3PullCreds), Type: corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{corev1.DockerConfigJsonKey: `{"auths":{}}`}},
		&corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: r3Cache},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      storage,
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				StorageClassName:              "",
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/minitask-r3-cache"}},
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: r3Cache},
			},
		},
		&corev1.PersistentVolumeClaim{
			ObjectMeta: meta(r3Cache),
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				StorageClassName: ptr.To(""),
				VolumeName:       r3Cache,
				Resources:        corev1.VolumeResourceRequirements{Requests: storage},
			},
		},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: r3Priority}, Value: 1000,
			Description: "release 3's rehearsal runs"},
	}
}

// r3BuildTask is a Task with every field release 3 added to Tasks: four
// workspaces (a description, a mountPath, readOnly), and steps with a
// script and env, or a command and args, each with a workingDir, env (plain,
// from a param, from a workspace path, valueFrom a Secret, a ConfigMap and
// the Pod), envFrom and computeResources. Its last step sleeps
// $(params.pause) seconds.
func r3BuildTask() *v1beta1.Task {
	return wrappers.V1beta1Task(wrappers.Task(ns, r3Task).Description("Clones and builds the shop").
		ParamDefault("repo", "https://example.com/shop.git").
		ParamDefault("pause", "1").
		Workspaces(
			v1.WorkspaceDeclaration{Name: "source", Description: "The checked-out repository", MountPath: "/workspace/src", ReadOnly: ptr.To(false)},
			v1.WorkspaceDeclaration{Name: "cache", Description: "Build outputs kept between runs"},
			v1.WorkspaceDeclaration{Name: "settings", ReadOnly: ptr.To(true)},
			v1.WorkspaceDeclaration{Name: "creds", MountPath: "/etc/creds", ReadOnly: ptr.To(true)},
		).
		Steps(
			v1.Step{
				Name: "fetch", Image: "alpine/git:2.47", Script: `git clone "$REPO" .`,
				WorkingDir: "$(workspaces.source.path)",
				Env: []corev1.EnvVar{
					{Name: "REPO", Value: "$(params.repo)"},
					{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: r3Creds}, Key: "token"}}},
					{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				},
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r3Settings}}},
					{Prefix: "GIT_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r3Creds}, Optional: ptr.To(true)}},
				},
				ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
				},
			},
			v1.Step{
				Name: "compile", Image: "golang:1.26",
				Command:    []string{"go"},
				Args:       []string{"build", "-o", "$(workspaces.cache.path)/shop", "./..."},
				WorkingDir: "$(workspaces.source.path)",
				Env: []corev1.EnvVar{
					{Name: "GOCACHE", Value: "$(workspaces.cache.path)/go"},
					{Name: "CGO_ENABLED", Value: "0"},
					{Name: "GOFLAGS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: r3Settings}, Key: "GOFLAGS"}}},
				},
				ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				},
			},
			// The local cluster reads how long a step runs from its script's
			// text, so the pause is pasted in: a number, from this test.
			v1.Step{Name: "wait", Image: "alpine:3", Script: "sleep $(params.pause)",
				Env: []corev1.EnvVar{{Name: "PAUSE", Value: "$(params.pause)"}}},
		).Obj())
}

// r3BuildRun is a run of r3BuildTask with every field release 3 added to
// runs: a workspace of each of the four kinds, a ServiceAccount, and a Pod
// template with all six of its fields, each set so that the local cluster
// still admits and schedules the Pod. pause is how long its last step sleeps.
func r3BuildRun(name string, pause int) *v1beta1.TaskRun {
	return wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, name, r3Task).Param("pause", fmt.Sprint(pause)).Timeout(10*time.Minute).
		Label("team", "shop").
		Workspace(v1.WorkspaceBinding{Name: "source", EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("256Mi"))}}).
		Workspace(v1.WorkspaceBinding{Name: "cache", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: r3Cache}}).
		Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: r3Settings},
			Items:                []corev1.KeyToPath{{Key: "GOFLAGS", Path: "goflags"}}}}).
		Workspace(v1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{
			SecretName: r3Creds, DefaultMode: ptr.To[int32](0o400)}}).
		ServiceAccount(r3Account).
		PodTemplate(v1.PodTemplate{
			NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
			Tolerations: []corev1.Toleration{{
				Key: "example.com/builds", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 10,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpExists}}},
				}}}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			ImagePullSecrets:  []corev1.LocalObjectReference{{Name: r3PullCreds}},
			PriorityClassName: r3Priority,
		}).Obj())
}
