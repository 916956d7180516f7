package runpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestBuildRelease3 checks what release 3 added to a run's Pod: the
// workspaces' volumes and mounts, the steps' command, args, workingDir, env
// and resources with references replaced, the run's labels, its
// ServiceAccount and Pod template, and the settings of restricted namespaces.
func TestBuildRelease3(t *testing.T) {
	defaultMounts := []corev1.VolumeMount{{Name: "ws-src", MountPath: "/workspace/src"}}
	emptyDir := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	restrictedContainer := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	oneStep := wrappers.Task("ns", "t").Step("only", "alpine:3", "").Obj()
	tests := map[string]struct {
		task       *v1.Task
		run        *v1.TaskRun
		params     params.Values
		restricted bool
		want       corev1.PodSpec
		wantLabels map[string]string
	}{
		"unbound workspaces are emptyDirs; every step mounts every one, read-only as declared": {
			task: wrappers.Task("ns", "t").Workspaces(
				v1.WorkspaceDeclaration{Name: "src"},
				v1.WorkspaceDeclaration{Name: "cache", MountPath: "/root/.cache", ReadOnly: ptr.To(true)},
				v1.WorkspaceDeclaration{Name: "out", ReadOnly: ptr.To(false)},
			).Step("a", "alpine:3", "").Step("b", "alpine:3", "").Obj(),
			run: wrappers.TaskRun("ns", "run", "t").Obj(),
			want: podSpec(func(s *corev1.PodSpec) {
				mounts := []corev1.VolumeMount{
					{Name: "ws-src", MountPath: "/workspace/src"},
					{Name: "ws-cache", MountPath: "/root/.cache", ReadOnly: true},
					{Name: "ws-out", MountPath: "/workspace/out"},
				}
				s.InitContainers = []corev1.Container{{Name: "step-a", Image: "alpine:3", VolumeMounts: mounts}}
				s.Containers = []corev1.Container{{Name: "step-b", Image: "alpine:3", VolumeMounts: mounts}}
				s.Volumes = []corev1.Volume{
					{Name: "ws-src", VolumeSource: emptyDir},
					{Name: "ws-cache", VolumeSource: emptyDir},
					{Name: "ws-out", VolumeSource: emptyDir},
				}
			}),
		},
		"each bound source used as bound; a binding the Task does not declare ignored": {
			task: wrappers.Task("ns", "t").Workspace("src").Workspace("settings").Workspace("creds").Workspace("tmp").
				Step("only", "alpine:3", "").Obj(),
			run: wrappers.TaskRun("ns", "run", "t").
				Workspace(v1.WorkspaceBinding{Name: "undeclared", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "other"}}).
				Workspace(v1.WorkspaceBinding{Name: "tmp", EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}).
				Workspace(v1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "git"}}).
				Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}).
				Workspace(v1.WorkspaceBinding{Name: "src", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}}).Obj(),
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3", VolumeMounts: []corev1.VolumeMount{
					{Name: "ws-src", MountPath: "/workspace/src"},
					{Name: "ws-settings", MountPath: "/workspace/settings"},
					{Name: "ws-creds", MountPath: "/workspace/creds"},
					{Name: "ws-tmp", MountPath: "/workspace/tmp"},
				}}}
				s.Volumes = []corev1.Volume{
					{Name: "ws-src", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}}},
					{Name: "ws-settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
					{Name: "ws-creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "git"}}},
					{Name: "ws-tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				}
			}),
		},
		"a workspace name too long for a volume name: shortened, the same in volume and mount": {
			task: wrappers.Task("ns", "t").Workspace(strings.Repeat("w", 63)).Step("only", "alpine:3", "").Obj(),
			run:  wrappers.TaskRun("ns", "run", "t").Obj(),
			want: podSpec(func(s *corev1.PodSpec) {
				name := runstate.WorkspaceVolume(strings.Repeat("w", 63))
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3", VolumeMounts: []corev1.VolumeMount{
					{Name: name, MountPath: "/workspace/" + strings.Repeat("w", 63)},
				}}}
				s.Volumes = []corev1.Volume{{Name: name, VolumeSource: emptyDir}}
			}),
		},
		"command, args, workingDir and env values substituted; envFrom, valueFrom and resources copied": {
			task: wrappers.Task("ns", "t").Param("target").Workspace("src").Steps(v1.Step{
				Name: "build", Image: "golang:1",
				Command:    []string{"go", "build"},
				Args:       []string{"-o", "$(workspaces.src.path)/bin/$(params.target)", "./$(params.target)"},
				WorkingDir: "$(workspaces.src.path)",
				Env: []corev1.EnvVar{
					{Name: "TARGET", Value: "$(params.target)"},
					{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				},
			}).Obj(),
			run:    wrappers.TaskRun("ns", "run", "t").Obj(),
			params: params.Values{Params: map[string]string{"target": "app"}},
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{
					Name: "step-build", Image: "golang:1",
					Command:    []string{"go", "build"},
					Args:       []string{"-o", "/workspace/src/bin/app", "./app"},
					WorkingDir: "/workspace/src",
					Env: []corev1.EnvVar{
						{Name: "TARGET", Value: "app"},
						{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
					},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
					},
					VolumeMounts: defaultMounts,
				}}
				s.Volumes = []corev1.Volume{{Name: "ws-src", VolumeSource: emptyDir}}
			}),
		},
		"a script step keeps /bin/sh -c, with workspace paths replaced": {
			task: wrappers.Task("ns", "t").Workspace("src").Step("only", "alpine:3", `cd "$(workspaces.src.path)" && ls`).Obj(),
			run:  wrappers.TaskRun("ns", "run", "t").Obj(),
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3",
					Command: stepscript.Command(`cd "/workspace/src" && ls`, "", stepscript.Timer{}, stepscript.Protocol{MessageLimit: 4096}), VolumeMounts: defaultMounts}}
				s.Volumes = []corev1.Volume{{Name: "ws-src", VolumeSource: emptyDir}}
			}),
		},
		"the run's labels on the Pod; the controller's own win": {
			task: oneStep,
			run: wrappers.TaskRun("ns", "run", "t").Label("team", "a").
				Label(runstate.LabelManagedBy, "someone-else").Label(runstate.LabelTaskRun, "other").Obj(),
			want:       podSpec(func(s *corev1.PodSpec) { s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3"}} }),
			wantLabels: map[string]string{"team": "a", runstate.LabelManagedBy: runstate.ManagedByValue, runstate.LabelTaskRun: "run"},
		},
		"a named ServiceAccount: set, its token automounted as by default": {
			task: oneStep,
			run:  wrappers.TaskRun("ns", "run", "t").ServiceAccount("builder").Obj(),
			want: corev1.PodSpec{
				RestartPolicy:      corev1.RestartPolicyNever,
				ServiceAccountName: "builder",
				Containers:         []corev1.Container{{Name: "step-only", Image: "alpine:3"}},
			},
		},
		"the Pod template copied": {
			task: oneStep,
			run:  wrappers.TaskRun("ns", "run", "t").PodTemplate(everyPodSetting()).Obj(),
			want: podSpec(func(s *corev1.PodSpec) {
				t := everyPodSetting()
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3"}}
				s.NodeSelector, s.Tolerations, s.Affinity = t.NodeSelector, t.Tolerations, t.Affinity
				s.SecurityContext, s.ImagePullSecrets, s.PriorityClassName = t.SecurityContext, t.ImagePullSecrets, t.PriorityClassName
			}),
		},
		"restricted namespace: every step container and the Pod get what the level requires": {
			task:       wrappers.Task("ns", "t").Step("a", "alpine:3", "").Step("b", "alpine:3", "").Obj(),
			run:        wrappers.TaskRun("ns", "run", "t").Obj(),
			restricted: true,
			want: podSpec(func(s *corev1.PodSpec) {
				s.InitContainers = []corev1.Container{{Name: "step-a", Image: "alpine:3", SecurityContext: restrictedContainer}}
				s.Containers = []corev1.Container{{Name: "step-b", Image: "alpine:3", SecurityContext: restrictedContainer}}
				s.SecurityContext = &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
				}
			}),
		},
		"restricted namespace, no user named: the run's own group and fsGroup are kept": {
			task: oneStep,
			run: wrappers.TaskRun("ns", "run", "t").PodTemplate(v1.PodTemplate{SecurityContext: &corev1.PodSecurityContext{
				RunAsGroup: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000),
			}}).Obj(),
			restricted: true,
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3", SecurityContext: restrictedContainer}}
				s.SecurityContext = &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000),
				}
			}),
		},
		"restricted namespace, a user named: no group or fsGroup is added": {
			task: oneStep,
			run: wrappers.TaskRun("ns", "run", "t").PodTemplate(v1.PodTemplate{SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: ptr.To[int64](1000),
			}}).Obj(),
			restricted: true,
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3", SecurityContext: restrictedContainer}}
				s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}
			}),
		},
		"restricted namespace: what the Pod template sets wins, the rest is filled in": {
			task:       oneStep,
			run:        wrappers.TaskRun("ns", "run", "t").PodTemplate(v1.PodTemplate{SecurityContext: ownSecurityContext()}).Obj(),
			restricted: true,
			want: podSpec(func(s *corev1.PodSpec) {
				s.Containers = []corev1.Container{{Name: "step-only", Image: "alpine:3", SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				}}}
				s.SecurityContext = ownSecurityContext()
			}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task, run := tc.task.DeepCopy(), tc.run.DeepCopy()
			got, err := Build(run, task, Inputs{Name: "run-pod", Params: tc.params, Restricted: tc.restricted})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("Pod spec mismatch (-want +got):\n%s", diff)
			}
			wantLabels := tc.wantLabels
			if wantLabels == nil {
				wantLabels = map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue, runstate.LabelTaskRun: "run"}
			}
			if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
				t.Errorf("Pod labels mismatch (-want +got):\n%s", diff)
			}
			// The Pod shares nothing with the run and Task it was built from.
			if diff := cmp.Diff(tc.task, task); diff != "" {
				t.Errorf("Build changed the Task (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tc.run, run); diff != "" {
				t.Errorf("Build changed the run (-before +after):\n%s", diff)
			}
		})
	}
}

// everyPodSetting is a run's Pod template that sets every field it has.
func everyPodSetting() v1.PodTemplate {
	return v1.PodTemplate{
		NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoSchedule}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}},
		SecurityContext:   &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000)},
		ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
		PriorityClassName: "low",
	}
}

// ownSecurityContext is a run's Pod security context that sets what a
// restricted namespace would otherwise fill in: runAsNonRoot (to false), a
// user and a seccomp profile.
func ownSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(false),
		RunAsUser:      ptr.To[int64](1000),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("build.json")},
	}
}

// podSpec returns the spec every run's Pod has, changed by change.
func podSpec(change func(*corev1.PodSpec)) corev1.PodSpec {
	s := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr.To(false)}
	change(&s)
	return s
}
