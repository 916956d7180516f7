package storedversions

import "testing"

func TestMayHoldUnreadableTimes(t *testing.T) {
	cases := map[string]struct {
		storedVersions []string
		want           bool
	}{
		"release 6, migrated":                             {storedVersions: []string{"v1"}, want: false},
		"release 6, migration under way (release 5 -> 6)": {storedVersions: []string{"v1beta1", "v1"}, want: true},
		"release 5 after a rollback from 6, migrated":     {storedVersions: []string{"v1beta1"}, want: true},
		"rollback 6 -> 5, migration under way":            {storedVersions: []string{"v1", "v1beta1"}, want: true},
		"releases 2 to 5":                                 {storedVersions: []string{"v1beta1"}, want: true},
		"the first release's objects never migrated":      {storedVersions: []string{"v1alpha1", "v1beta1", "v1"}, want: true},
		"the first release":                               {storedVersions: []string{"v1alpha1"}, want: true},
		"v1alpha1 and v1 only":                            {storedVersions: []string{"v1alpha1", "v1"}, want: true},
		"a later release's version, not known here":       {storedVersions: []string{"v1", "v2"}, want: true},
		"empty: a CRD whose status is not set yet":        {storedVersions: nil, want: true},
		"v1 twice": {storedVersions: []string{"v1", "v1"}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MayHoldUnreadableTimes(tc.storedVersions); got != tc.want {
				t.Errorf("MayHoldUnreadableTimes(%q) = %v, want %v", tc.storedVersions, got, tc.want)
			}
		})
	}
}
