package params

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstitute(t *testing.T) {
	values := Values{
		Params: map[string]string{
			"greeting": "hello",
			"image":    "alpine:3",
			"empty":    "",
			"nested":   "$(params.greeting)",
			"ws":       "$(workspaces.src.path)",
			"src":      "a param, not the workspace",
		},
		Workspaces: map[string]string{
			"src":   "/workspace/src",
			"cache": "/var/cache/build",
		},
		Results: map[string]string{
			"digest": "/minitask/results/digest",
			"src":    "/minitask/results/src",
		},
	}
	params := Values{Params: values.Params}
	tests := map[string]struct {
		s      string
		values Values
		want   string
	}{
		"no references":   {s: "echo hi", values: values, want: "echo hi"},
		"no values":       {s: "echo $(params.greeting) $(workspaces.src.path)", want: "echo $(params.greeting) $(workspaces.src.path)"},
		"one reference":   {s: "echo $(params.greeting)", values: values, want: "echo hello"},
		"whole string":    {s: "$(params.image)", values: values, want: "alpine:3"},
		"repeated":        {s: "$(params.greeting) $(params.greeting)!", values: values, want: "hello hello!"},
		"empty value":     {s: "[$(params.empty)]", values: values, want: "[]"},
		"unknown name":    {s: "$(params.other) $(params.greeting)", values: values, want: "$(params.other) hello"},
		"single pass":     {s: "$(params.nested)", values: values, want: "$(params.greeting)"},
		"case matters":    {s: "$(params.Greeting)", values: values, want: "$(params.Greeting)"},
		"shell untouched": {s: "$(date) $HOME $(params.greeting)", values: values, want: "$(date) $HOME hello"},
		"malformed left, later ones replaced": {
			s:      "$(params.) $(params.a b) $(params.greeting) $(params.greeting",
			values: values,
			want:   "$(params.) $(params.a b) hello $(params.greeting",
		},
		"unclosed before a reference": {
			s:      "$(params.x $(params.greeting)",
			values: values,
			want:   "$(params.x hello",
		},
		"multi-byte text around": {
			s:      "grüß $(params.greeting) ✓",
			values: values,
			want:   "grüß hello ✓",
		},
		"workspace path": {
			s:      "cd $(workspaces.src.path) && ls $(workspaces.cache.path)/go",
			values: values,
			want:   "cd /workspace/src && ls /var/cache/build/go",
		},
		"both kinds in one pass; a param's value naming a workspace stays as is": {
			s:      "$(params.ws) $(workspaces.src.path) $(params.src)",
			values: values,
			want:   "$(workspaces.src.path) /workspace/src a param, not the workspace",
		},
		"a workspace's name is no param's": {
			s:      "$(workspaces.src.path) $(params.src)",
			values: params,
			want:   "$(workspaces.src.path) a param, not the workspace",
		},
		"malformed workspace references left": {
			s:      "$(workspaces.src) $(workspaces.src.other) $(workspaces..path) $(workspaces.src.path",
			values: values,
			want:   "$(workspaces.src) $(workspaces.src.other) $(workspaces..path) $(workspaces.src.path",
		},
		"result path": {
			s:      "printf %s sha256:1 > $(results.digest.path)",
			values: values,
			want:   "printf %s sha256:1 > /minitask/results/digest",
		},
		"one name, three kinds": {
			s:      "$(results.src.path) $(workspaces.src.path) $(params.src)",
			values: values,
			want:   "/minitask/results/src /workspace/src a param, not the workspace",
		},
		"results alone": {
			s:      "$(results.digest.path) $(params.greeting)",
			values: Values{Results: values.Results},
			want:   "/minitask/results/digest $(params.greeting)",
		},
		"malformed result references left": {
			s:      "$(results.digest) $(results.digest.x) $(results..path) $(results.digest.path",
			values: values,
			want:   "$(results.digest) $(results.digest.x) $(results..path) $(results.digest.path",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Substitute(tc.s, tc.values)); diff != "" {
				t.Errorf("Substitute(%q) (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}
