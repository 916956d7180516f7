package cli_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// buildTask is the Task build, which uses what release 3 added: three workspaces (one
// at its default path, one read-only elsewhere, one a run may leave
// unbound), env from values, a Secret, a ConfigMap and the Pod, and
// resources on one step.
func buildTask() *v1.Task {
	return wrappers.Task("", "build").
		Workspaces(
			v1.WorkspaceDeclaration{Name: "source", Description: "The checked-out repository"},
			v1.WorkspaceDeclaration{Name: "settings", MountPath: "/etc/build", ReadOnly: ptr.To(true)},
			v1.WorkspaceDeclaration{Name: "scratch"},
		).
		Steps(
			v1.Step{Name: "fetch", Image: "alpine/git:2", Script: `git clone "$REPO" "$(workspaces.source.path)"`,
				Env: []corev1.EnvVar{
					{Name: "REPO", Value: "https://example.com/app.git"},
					{Name: "GIT_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{Prefix: "GIT_", ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "git-settings"}}}},
			},
			v1.Step{Name: "compile", Image: "golang:1.26", Command: []string{"go"}, Args: []string{"build", "./..."},
				WorkingDir: "$(workspaces.source.path)",
				Env: []corev1.EnvVar{
					{Name: "GOFLAGS", Value: "-mod=mod"},
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				},
				ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				},
			},
		).Obj()
}

// release3History fills h's namespace, where no controller runs, with the
// Task build and runs of it, none seen by the controller yet:
//
//	build-full    every release 3 field: workspaces (one the Task does not
//	              declare), a ServiceAccount, a Pod template, labels
//	              team=platform, tier=nightly
//	build-team    labels team=platform only
//	build-plain   nothing but its Task
func (h *harness) release3History(t *testing.T) {
	t.Helper()
	h.Create(t, buildTask(),
		wrappers.TaskRun("", "build-full", "build").
			Workspace(v1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "build-cache"}}).
			Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}}).
			Workspace(v1.WorkspaceBinding{Name: "cache", EmptyDir: &corev1.EmptyDirVolumeSource{}}).
			ServiceAccount("builder").
			PodTemplate(v1.PodTemplate{
				NodeSelector: map[string]string{"disktype": "ssd", "kubernetes.io/arch": "amd64"},
				Tolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "build", Effect: corev1.TaintEffectNoSchedule},
					{Key: "spot", Operator: corev1.TolerationOpExists},
				},
				SecurityContext:   &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000))},
				ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
				PriorityClassName: "batch-low",
			}).
			Label("team", "platform").Label("tier", "nightly").Obj(),
		wrappers.TaskRun("", "build-team", "build").Label("team", "platform").Obj(),
		wrappers.TaskRun("", "build-plain", "build").Obj(),
	)
}
