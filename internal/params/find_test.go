package params

import (
	"strings"
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
			s: `echo "$HOME" $(date) ${USER} $(params) $(param.x) $(PARAMS.x) $(workspaces) $(workspace.x.path) $(result.x.path) $(results) $(RESULTS.x.path)`,
		},
		"one reference": {
			s:    "echo $(params.greeting)",
			want: []Ref{{Kind: KindParam, Name: "greeting", Start: 5, End: 23}},
		},
		"whole string": {
			s:    "$(params.image)",
			want: []Ref{{Kind: KindParam, Name: "image", Start: 0, End: 15}},
		},
		"several in order, repeats kept": {
			s: "$(params.a)-$(params.B_2)\n$(params.a)",
			want: []Ref{
				{Kind: KindParam, Name: "a", Start: 0, End: 11},
				{Kind: KindParam, Name: "B_2", Start: 12, End: 25},
				{Kind: KindParam, Name: "a", Start: 26, End: 37},
			},
		},
		"every name byte": {
			s:    "$(params._aZ09-_)",
			want: []Ref{{Kind: KindParam, Name: "_aZ09-_", Start: 0, End: 17}},
		},
		"adjacent to other text": {
			s:    "x$(params.y)z",
			want: []Ref{{Kind: KindParam, Name: "y", Start: 1, End: 12}},
		},
		"doubled dollar still a reference": {
			s:    "$$(params.x)",
			want: []Ref{{Kind: KindParam, Name: "x", Start: 1, End: 12}},
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
		"an object param's key": {
			s:    "repo=$(params.image.repo)",
			want: []Ref{{Kind: KindParam, Name: "image", Key: "repo", Start: 5, End: 25}},
		},
		"an array param's items": {
			s:    "$(params.files[*])",
			want: []Ref{{Kind: KindParam, Name: "files", Star: true, Start: 0, End: 18}},
		},
		"a key with dashes and digits": {
			s:    "$(params.o.a-1_B)",
			want: []Ref{{Kind: KindParam, Name: "o", Key: "a-1_B", Start: 0, End: 17}},
		},
		"a key of a key": {
			s:       "$(params.a.b.c)",
			wantErr: `malformed param reference "$(params.a.b.c)": key "b.c" of param "a": a key in a reference is letters, digits, '_' and '-'`,
		},
		"an empty key": {
			s:       "$(params.a.)",
			wantErr: `malformed param reference "$(params.a.)": empty key after param "a"`,
		},
		"an index": {
			s:       "$(params.files[0])",
			wantErr: `malformed param reference "$(params.files[0])": "files[0]": only [*], after an array param's name, may follow it`,
		},
		"[*] not at the end": {
			s:       "$(params.files[*].x)",
			wantErr: `malformed param reference "$(params.files[*].x)": "files[*].x": only [*], after an array param's name, may follow it`,
		},
		"[*] after a key": {
			s:       "$(params.image.repo[*])",
			wantErr: `malformed param reference "$(params.image.repo[*])": "image.repo[*]": [*] follows an array param's name, never an object's key`,
		},
		"[*] alone": {
			s:       "$(params.[*])",
			wantErr: `malformed param reference "$(params.[*])": empty name`,
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
		"workspace path": {
			s:    "cd $(workspaces.source.path)",
			want: []Ref{{Kind: KindWorkspace, Name: "source", Start: 3, End: 28}},
		},
		"both kinds in order": {
			s: "$(params.a)$(workspaces.b-2.path)/$(params.a)",
			want: []Ref{
				{Kind: KindParam, Name: "a", Start: 0, End: 11},
				{Kind: KindWorkspace, Name: "b-2", Start: 11, End: 33},
				{Kind: KindParam, Name: "a", Start: 34, End: 45},
			},
		},
		"a 63-character workspace name": {
			s:    "$(workspaces." + strings.Repeat("w", 63) + ".path)",
			want: []Ref{{Kind: KindWorkspace, Name: strings.Repeat("w", 63), Start: 0, End: 82}},
		},
		"workspace without .path": {
			s:       "cd $(workspaces.source)",
			wantErr: `malformed workspace reference "$(workspaces.source)": missing ".path" after the workspace's name: write $(workspaces.source.path)`,
		},
		"workspace with another field": {
			s:       "$(workspaces.source.claim)",
			wantErr: `malformed workspace reference "$(workspaces.source.claim)": unknown field "claim" of workspace "source": only "path" may be referred to`,
		},
		"workspace with an empty name": {
			s:       "$(workspaces..path)",
			wantErr: `malformed workspace reference "$(workspaces..path)": empty name`,
		},
		"workspace with nothing": {
			s:       "$(workspaces.)",
			wantErr: `malformed workspace reference "$(workspaces.)": empty name`,
		},
		"workspace unclosed": {
			s:       "cd $(workspaces.source.path && ls",
			wantErr: `malformed workspace reference "$(workspaces.source.path": missing ")"`,
		},
		"workspace name with upper case": {
			s:       "$(workspaces.Source.path)",
			wantErr: `malformed workspace reference "$(workspaces.Source.path)": name "Source" does not match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		},
		"workspace name with an underscore": {
			s:       "$(workspaces.my_src.path)",
			wantErr: `malformed workspace reference "$(workspaces.my_src.path)": name "my_src" does not match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		},
		"workspace name ending in a dash": {
			s:       "$(workspaces.src-.path)",
			wantErr: `malformed workspace reference "$(workspaces.src-.path)": name "src-" does not match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		},
		"workspace name too long": {
			s:       "$(workspaces." + strings.Repeat("w", 64) + ".path)",
			wantErr: `malformed workspace reference "$(workspaces.` + strings.Repeat("w", 64) + `.path)": name "` + strings.Repeat("w", 64) + `" is longer than 63 characters`,
		},
		"workspace name with a dot": {
			s:       "$(workspaces.a.b.path)",
			wantErr: `malformed workspace reference "$(workspaces.a.b.path)": name "a.b" does not match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		},
		"workspace name with a space": {
			s:       "$(workspaces.a b.path)",
			wantErr: `malformed workspace reference "$(workspaces.a b.path)": name "a b" does not match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		},
		"result path": {
			s:    "echo -n ok > $(results.digest_2-x.path)",
			want: []Ref{{Kind: KindResult, Name: "digest_2-x", Start: 13, End: 39}},
		},
		"every kind in order": {
			s: "$(results.a.path)$(params.a)$(workspaces.a.path)",
			want: []Ref{
				{Kind: KindResult, Name: "a", Start: 0, End: 17},
				{Kind: KindParam, Name: "a", Start: 17, End: 28},
				{Kind: KindWorkspace, Name: "a", Start: 28, End: 48},
			},
		},
		"result without .path": {
			s:       "cat $(results.digest)",
			wantErr: `malformed result reference "$(results.digest)": missing ".path" after the result's name: write $(results.digest.path)`,
		},
		"result with another field": {
			s:       "$(results.digest.value)",
			wantErr: `malformed result reference "$(results.digest.value)": unknown field "value" of result "digest": only "path" may be referred to`,
		},
		"result with an empty name": {
			s:       "$(results..path)",
			wantErr: `malformed result reference "$(results..path)": empty name`,
		},
		"result unclosed": {
			s:       "echo > $(results.digest.path",
			wantErr: `malformed result reference "$(results.digest.path": missing ")"`,
		},
		"result name starting with a digit": {
			s:       "$(results.1st.path)",
			wantErr: `malformed result reference "$(results.1st.path)": name "1st" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"result name with a slash": {
			s:       "$(results.../x.path)",
			wantErr: `malformed result reference "$(results.../x.path)": name "../x" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"result name with a dot": {
			s:       "$(results.a.b.path)",
			wantErr: `malformed result reference "$(results.a.b.path)": name "a.b" does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`,
		},
		"first malformed one is reported, whatever its kind": {
			s:       "$(params.ok) $(workspaces.x) $(params.",
			wantErr: `malformed workspace reference "$(workspaces.x)": missing ".path" after the workspace's name: write $(workspaces.x.path)`,
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
