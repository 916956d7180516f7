package runstate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestWorkspaceVolume(t *testing.T) {
	long := strings.Repeat("w", 63)
	tests := map[string]struct {
		name string
		want string
	}{
		"short name kept":          {name: "source", want: "ws-source"},
		"60 characters still fit":  {name: strings.Repeat("w", 60), want: "ws-" + strings.Repeat("w", 60)},
		"61 characters: shortened": {name: strings.Repeat("w", 61), want: "ws-" + strings.Repeat("w", 49) + "-" + hashOf(strings.Repeat("w", 61))},
		"63 characters: shortened": {name: long, want: "ws-" + strings.Repeat("w", 49) + "-" + hashOf(long)},
		"a dash is not left before the hash": {
			name: strings.Repeat("w", 48) + "-" + strings.Repeat("x", 14),
			want: "ws-" + strings.Repeat("w", 48) + "-" + hashOf(strings.Repeat("w", 48)+"-"+strings.Repeat("x", 14)),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := WorkspaceVolume(tc.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WorkspaceVolume(%q) (-want +got):\n%s", tc.name, diff)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("WorkspaceVolume(%q) = %q, not a valid volume name: %v", tc.name, got, errs)
			}
		})
	}
	if a, b := WorkspaceVolume(long), WorkspaceVolume(strings.Repeat("w", 62)+"x"); a == b {
		t.Errorf("two long names that share a prefix got one volume name %q", a)
	}
}

func TestWorkspacePaths(t *testing.T) {
	task := &v1.Task{Spec: v1.TaskSpec{Workspaces: []v1.WorkspaceDeclaration{
		{Name: "source"},
		{Name: "cache", MountPath: "/root/.cache"},
	}}}
	want := map[string]string{"source": "/workspace/source", "cache": "/root/.cache"}
	if diff := cmp.Diff(want, WorkspacePaths(task)); diff != "" {
		t.Errorf("WorkspacePaths() (-want +got):\n%s", diff)
	}
}
