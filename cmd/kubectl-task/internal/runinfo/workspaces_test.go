package runinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestParseWorkspace(t *testing.T) {
	tests := map[string]struct {
		flag    string
		want    v1.WorkspaceBinding
		wantErr string
	}{
		"emptyDir": {
			flag: "scratch=emptyDir",
			want: v1.WorkspaceBinding{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}},
		},
		"emptydir in any case": {
			flag: "scratch=EMPTYDIR",
			want: v1.WorkspaceBinding{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}},
		},
		"a claim": {
			flag: "source=pvc:build-cache",
			want: v1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "build-cache"}},
		},
		"a ConfigMap, its kind written as in the API": {
			flag: "settings=configMap:build.settings",
			want: v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "build.settings"}}},
		},
		"a Secret": {
			flag: "creds=secret:git-creds",
			want: v1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "git-creds"}},
		},
		"no =": {
			flag:    "source",
			wantErr: "it needs NAME=emptyDir, NAME=pvc:CLAIM, NAME=configmap:NAME or NAME=secret:NAME, e.g. -w source=pvc:my-claim",
		},
		"no source": {
			flag:    "source=",
			wantErr: "it needs NAME=emptyDir, NAME=pvc:CLAIM, NAME=configmap:NAME or NAME=secret:NAME, e.g. -w source=pvc:my-claim",
		},
		"an unknown kind of source": {
			flag:    "source=hostPath:/etc",
			wantErr: `unknown source "hostPath"; it is one of emptyDir, pvc:CLAIM, configmap:NAME and secret:NAME`,
		},
		"a claim with no name": {
			flag:    "source=pvc:",
			wantErr: "pvc needs a name, as in -w source=pvc:NAME",
		},
		"a claim with no colon": {
			flag:    "source=pvc",
			wantErr: "pvc needs a name, as in -w source=pvc:NAME",
		},
		"emptyDir with a name": {
			flag:    "scratch=emptyDir:x",
			wantErr: "emptyDir takes no name, as in -w scratch=emptyDir",
		},
		"a workspace name that is no DNS-1123 label": {
			flag:    "Source=emptyDir",
			wantErr: `workspace name "Source": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
		"a Secret name that is no DNS-1123 subdomain": {
			flag:    "creds=secret:Git_Creds",
			wantErr: `secret name "Git_Creds": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseWorkspace(tc.flag)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("ParseWorkspace(%q) error (-want +got):\n%s", tc.flag, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseWorkspace(%q) (-want +got):\n%s", tc.flag, diff)
			}
		})
	}
}

// TestWorkspaceSource checks that describe shows a binding in -w's words,
// so that what it shows can be typed again, with what -w cannot say added.
func TestWorkspaceSource(t *testing.T) {
	for _, flag := range []string{"w=emptyDir", "w=pvc:cache", "w=configmap:settings", "w=secret:creds"} {
		b, err := ParseWorkspace(flag)
		if err != nil {
			t.Fatalf("ParseWorkspace(%q): %v", flag, err)
		}
		if got, want := "w="+WorkspaceSource(b), flag; got != want {
			t.Errorf("WorkspaceSource(ParseWorkspace(%q)) = %q, want %q", flag, got, want)
		}
	}

	tests := map[string]struct {
		binding v1.WorkspaceBinding
		want    string
	}{
		"an emptyDir in memory, bounded": {
			binding: v1.WorkspaceBinding{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}},
			want:    "emptyDir (medium Memory, sizeLimit 1Gi)",
		},
		"a read-only claim": {
			binding: v1.WorkspaceBinding{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache", ReadOnly: true}},
			want:    "pvc:cache (read-only)",
		},
		"some keys of an optional ConfigMap": {
			binding: v1.WorkspaceBinding{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
				Items:                []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "b", Path: "b"}}, Optional: ptr.To(true)}},
			want: "configmap:settings (2 keys, optional)",
		},
		"one key of a Secret": {
			binding: v1.WorkspaceBinding{Secret: &corev1.SecretVolumeSource{SecretName: "creds", Items: []corev1.KeyToPath{{Key: "token", Path: "token"}}}},
			want:    "secret:creds (1 key)",
		},
		"no source": {
			want: "(no source)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, WorkspaceSource(tc.binding)); diff != "" {
				t.Errorf("WorkspaceSource (-want +got):\n%s", diff)
			}
		})
	}
}
