package controllers

import (
	"fmt"
	"testing"
	"time"
)

func TestUnrestrictedNamespaces(t *testing.T) {
	tests := map[string]struct {
		after     time.Duration
		namespace string
		want      bool
	}{
		"remembered":                        {0, "ci", true},
		"still remembered at its ttl":       {unrestrictedNamespacesTTL, "ci", true},
		"expired after its ttl":             {unrestrictedNamespacesTTL + time.Second, "ci", false},
		"never read":                        {0, "other", false},
		"forgotten after a Pod Security no": {0, "gone", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			u := newUnrestrictedNamespaces(func() time.Time { return now })
			u.remember("ci")
			u.remember("gone")
			u.forget("gone")
			now = now.Add(tc.after)
			if got := u.remembered(tc.namespace); got != tc.want {
				t.Errorf("remembered(%q) %v after it was read = %t, want %t", tc.namespace, tc.after, got, tc.want)
			}
		})
	}

	var none *unrestrictedNamespaces
	none.remember("ci")
	none.forget("ci")
	if none.remembered("ci") {
		t.Error("a nil memory remembered a namespace")
	}
}

func TestUnrestrictedNamespacesAreBounded(t *testing.T) {
	u := newUnrestrictedNamespaces(time.Now)
	for i := range unrestrictedNamespacesMax + 1 {
		u.remember(fmt.Sprintf("ns-%d", i))
	}
	if n := len(u.names.Keys()); n != unrestrictedNamespacesMax {
		t.Errorf("%d namespaces remembered, want at most %d", n, unrestrictedNamespacesMax)
	}
}
