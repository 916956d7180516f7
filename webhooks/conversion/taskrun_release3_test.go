package conversion

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// TestTaskRunRelease3Fields: each TaskRun field release 3 added rides in
// the stash at its v1beta1 path, and comes back from it. Every case is
// checked both ways: the hub converts to the spoke carrying stash, and
// that spoke converts back to the hub.
func TestTaskRunRelease3Fields(t *testing.T) {
	tests := map[string]struct {
		hub   *v1beta1.TaskRun
		stash string // the lost fields' JSON; "" for no annotation
	}{
		"workspaces, one of each source": {
			hub: hubRun().
				Workspace(v1beta1.WorkspaceBinding{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}}).
				Workspace(v1beta1.WorkspaceBinding{Name: "ram", EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("64Mi"))}}).
				Workspace(v1beta1.WorkspaceBinding{Name: "cache", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache", ReadOnly: true}}).
				Workspace(v1beta1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
					Items:                []corev1.KeyToPath{{Key: "a", Path: "conf/a", Mode: ptr.To[int32](0o400)}}, DefaultMode: ptr.To[int32](0o644)}}).
				Workspace(v1beta1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "git-creds", Optional: ptr.To(false)}}).
				Obj(),
			stash: `{"spec":{"workspaces":[{"name":"scratch","emptyDir":{}},{"name":"ram","emptyDir":{"medium":"Memory","sizeLimit":"64Mi"}},` +
				`{"name":"cache","persistentVolumeClaim":{"claimName":"cache","readOnly":true}},` +
				`{"name":"settings","configMap":{"name":"settings","items":[{"key":"a","path":"conf/a","mode":256}],"defaultMode":420}},` +
				`{"name":"creds","secret":{"secretName":"git-creds","optional":false}}]}}`,
		},
		"an empty workspaces list is not stashed": {
			hub: hubRun().Obj(),
		},
		"serviceAccountName": {
			hub:   hubRun().ServiceAccount("builder").Obj(),
			stash: `{"spec":{"serviceAccountName":"builder"}}`,
		},
		"an empty podTemplate survives, apart from an absent one": {
			hub:   hubRun().PodTemplate(v1beta1.PodTemplate{}).Obj(),
			stash: `{"spec":{"podTemplate":{}}}`,
		},
		"a podTemplate with every field": {
			hub: hubRun().PodTemplate(v1beta1.PodTemplate{
				NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)}},
				Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ci"}}, TopologyKey: "kubernetes.io/hostname"}}}},
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), RunAsUser: ptr.To[int64](0),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
				PriorityClassName: "batch",
			}).Obj(),
			stash: `{"spec":{"podTemplate":{"nodeSelector":{"kubernetes.io/arch":"arm64"},` +
				`"tolerations":[{"key":"dedicated","operator":"Equal","value":"ci","effect":"NoExecute","tolerationSeconds":0}],` +
				`"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"ci"}},"topologyKey":"kubernetes.io/hostname"}]}},` +
				`"securityContext":{"runAsUser":0,"runAsNonRoot":false,"seccompProfile":{"type":"RuntimeDefault"}},` +
				`"imagePullSecrets":[{"name":"registry"}],"priorityClassName":"batch"}}}`,
		},
		"release 3's fields share the annotation with release 2's": {
			hub:   hubRun().Params(v1beta1.Param{Name: "greeting", Value: "hi"}).Cancelled().ServiceAccount("builder").PodTemplate(v1beta1.PodTemplate{}).Obj(),
			stash: `{"spec":{"params":[{"name":"greeting","value":"hi"}],"status":"Cancelled","serviceAccountName":"builder","podTemplate":{}}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := spokeRun()
			if tc.stash != "" {
				want.Annotation(stashed(tc.stash))
			}
			checkFromHub(t, ConvertBetaTaskRunToAlpha, tc.hub, want.Obj())
			checkToHub(t, ConvertAlphaTaskRunToBeta, want.Obj(), tc.hub)
		})
	}
}

// TestTaskRunStashCompatibility: a stash release 2 wrote reads unchanged,
// and one whose new fields do not parse is ignored whole, as any other.
func TestTaskRunStashCompatibility(t *testing.T) {
	tests := map[string]struct {
		spoke *v1alpha1.TaskRun
		want  *v1beta1.TaskRun
	}{
		"a release-2 stash": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"params":[{"name":"greeting","value":"hi"}],"timeout":"10m","status":"Cancelled"}}`)).Obj(),
			want:  hubRun().Params(v1beta1.Param{Name: "greeting", Value: "hi"}).TimeoutText("10m").Cancelled().Obj(),
		},
		"a podTemplate of the wrong shape": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"timeout":"10m","podTemplate":[]}}`)).Obj(),
			want:  hubRun().Obj(),
		},
		"a workspace with a bad quantity": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"workspaces":[{"name":"w","emptyDir":{"sizeLimit":"huge"}}]}}`)).Obj(),
			want:  hubRun().Obj(),
		},
		"a serviceAccountName that is no string": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"serviceAccountName":7}}`)).Obj(),
			want:  hubRun().Obj(),
		},
		"a workspace binding with two sources is restored as is: admission judges it": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"workspaces":[{"name":"w","emptyDir":{},"secret":{"secretName":"s"}}]}}`)).Obj(),
			want: hubRun().Workspace(v1beta1.WorkspaceBinding{Name: "w", EmptyDir: &corev1.EmptyDirVolumeSource{},
				Secret: &corev1.SecretVolumeSource{SecretName: "s"}}).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskRunToBeta, tc.spoke, tc.want)
		})
	}
}
