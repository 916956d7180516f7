package apicompat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckOrder(t *testing.T) {
	cases := map[string]struct {
		versions []string
		want     string
	}{
		"oldest first": {versions: []string{"v0.1.0", "v0.2.0", "v0.4.0"}},
		"one":          {versions: []string{"v0.4.0"}},
		"newest first": {versions: []string{"v0.1.0", "v0.4.0", "v0.2.0"},
			want: "the frozen releases must be listed oldest first: r2 (v0.2.0) comes after r1 (v0.4.0)"},
		"twice": {versions: []string{"v0.2.0", "v0.2.0"},
			want: "the frozen releases must be listed oldest first: r1 (v0.2.0) comes after r0 (v0.2.0)"},
		"by number, not by text": {versions: []string{"v0.9.0", "v0.10.0"}},
		"no version": {versions: []string{"v0.1.0", ""},
			want: `release r1: version "" (its CRDs' minitask.dev/release): could not parse "" as version`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var releases []Release
			for i, v := range tc.versions {
				releases = append(releases, Release{Name: "r" + string(rune('0'+i)), Version: v})
			}
			got := ""
			if err := checkOrder(releases); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkOrder (-want +got):\n%s", diff)
			}
		})
	}
}
