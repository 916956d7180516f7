package params

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstitute(t *testing.T) {
	values := map[string]string{
		"greeting": "hello",
		"image":    "alpine:3",
		"empty":    "",
		"nested":   "$(params.greeting)",
	}
	tests := map[string]struct {
		s      string
		values map[string]string
		want   string
	}{
		"no references":   {s: "echo hi", values: values, want: "echo hi"},
		"nil values":      {s: "echo $(params.greeting)", want: "echo $(params.greeting)"},
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
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Substitute(tc.s, tc.values)); diff != "" {
				t.Errorf("Substitute(%q) (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}
