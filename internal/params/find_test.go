package params

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	tests := map[string]struct {
		s       string
		want    []Ref
		wantErr string
	}{
		"empty string":  {s: ""},
		"no references": {s: "echo hello"},
		"shell syntax is not a reference": {
			s: `echo "$HOME" $(date) ${USER} $(params) $(param.x) $(PARAMS.x)`,
		},
		"one reference": {
			s:    "echo $(params.greeting)",
			want: []Ref{{Name: "greeting", Start: 5, End: 23}},
		},
		"whole string": {
			s:    "$(params.image)",
			want: []Ref{{Name: "image", Start: 0, End: 15}},
		},
		"several in order, repeats kept": {
			s: "$(params.a)-$(params.B_2)\n$(params.a)",
			want: []Ref{
				{Name: "a", Start: 0, End: 11},
				{Name: "B_2", Start: 12, End: 25},
				{Name: "a", Start: 26, End: 37},
			},
		},
		"every name byte": {
			s:    "$(params._aZ09-_)",
			want: []Ref{{Name: "_aZ09-_", Start: 0, End: 17}},
		},
		"adjacent to other text": {
			s:    "x$(params.y)z",
			want: []Ref{{Name: "y", Start: 1, End: 12}},
		},
		"doubled dollar still a reference": {
			s:    "$$(params.x)",
			want: []Ref{{Name: "x", Start: 1, End: 12}},
		},
		"empty name": {
			s:       "echo $(params.)",
			wantErr: `malformed param reference "$(params.)": empty name`,
		},
		"unclosed without name": {
			s:       "echo $(params.",
			wantErr: `malformed param reference "$(params.": missing ")"`,
		},
		"unclosed with name": {
			s:       "echo $(params.x",
			wantErr: `malformed param reference "$(params.x": missing ")"`,
		},
		"unclosed on its line": {
			s:       "echo $(params.x y\necho )",
			wantErr: `malformed param reference "$(params.x": missing ")"`,
		},
		"unclosed before another reference": {
			s:       "$(params.x $(params.y)",
			wantErr: `malformed param reference "$(params.x": missing ")"`,
		},
		"space in name": {
			s:       "echo $(params.a b)",
			wantErr: `malformed param reference "$(params.a b)": name "a b" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"dot in name": {
			s:       "$(params.a.b)",
			wantErr: `malformed param reference "$(params.a.b)": name "a.b" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"name starts with a digit": {
			s:       "$(params.1x)",
			wantErr: `malformed param reference "$(params.1x)": name "1x" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"name starts with a dash": {
			s:       "$(params.-x)",
			wantErr: `malformed param reference "$(params.-x)": name "-x" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"non-ASCII name": {
			s:       "$(params.grüß)",
			wantErr: `malformed param reference "$(params.grüß)": name "grüß" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"first malformed one is reported": {
			s:       "$(params.ok) $(params.) $(params.x",
			wantErr: `malformed param reference "$(params.)": empty name`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Find(tc.s)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("Find(%q) error (-want +got):\n%s", tc.s, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Find(%q) refs (-want +got):\n%s", tc.s, diff)
			}
		})
	}
}
