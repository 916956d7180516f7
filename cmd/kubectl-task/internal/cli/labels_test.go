package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLabels(t *testing.T) {
	tests := map[string]struct {
		flags   []string
		want    map[string]string
		wantErr string
	}{
		"none": {},
		"several, one with a prefix and one with an empty value": {
			flags: []string{"team=platform", "minitask.dev/purpose=nightly", "draft="},
			want:  map[string]string{"team": "platform", "minitask.dev/purpose": "nightly", "draft": ""},
		},
		"no =": {
			flags:   []string{"team"},
			wantErr: `malformed -l "team": it needs key=value, e.g. -l team=build`,
		},
		"no key": {
			flags:   []string{"=platform"},
			wantErr: `malformed -l "=platform": it needs key=value, e.g. -l team=build`,
		},
		"a key that is no qualified name": {
			flags:   []string{"my team=platform"},
			wantErr: `malformed -l "my team=platform": its key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
		"a value over 63 characters": {
			flags:   []string{"team=" + strings.Repeat("a", 64)},
			wantErr: `malformed -l "team=` + strings.Repeat("a", 64) + `": its value: must be no more than 63 bytes`,
		},
		"a value with a slash": {
			flags:   []string{"team=a/b"},
			wantErr: `malformed -l "team=a/b": its value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		},
		"a key given twice": {
			flags:   []string{"team=a", "team=b"},
			wantErr: "-l team is given twice; give each label once",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseLabels(nil, tc.flags)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("parseLabels(%q) error (-want +got):\n%s", tc.flags, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseLabels(%q) (-want +got):\n%s", tc.flags, diff)
			}
		})
	}
}
