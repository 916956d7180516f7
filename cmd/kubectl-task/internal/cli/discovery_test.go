package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// cachedDiscovery is a discovery cache over fake groups: stale until
// Invalidate, after which it answers with fresh.
type cachedDiscovery struct {
	*fakediscovery.FakeDiscovery
	cached, fresh []metav1.APIGroup
	invalidated   bool
}

var _ discovery.CachedDiscoveryInterface = &cachedDiscovery{}

func (d *cachedDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	if d.invalidated {
		return &metav1.APIGroupList{Groups: d.fresh}, nil
	}
	return &metav1.APIGroupList{Groups: d.cached}, nil
}

func (d *cachedDiscovery) Fresh() bool { return d.invalidated }
func (d *cachedDiscovery) Invalidate() { d.invalidated = true }

// minitaskGroup is minitask.dev as a cluster serving versions lists it.
func minitaskGroup(versions ...string) []metav1.APIGroup {
	g := metav1.APIGroup{Name: "minitask.dev"}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: "minitask.dev/" + v, Version: v})
	}
	return []metav1.APIGroup{{Name: "apps"}, g}
}

// TestCheckServesV1 checks what the plugin says of each release's cluster,
// and that a cached answer without v1 is asked again (an upgrade since it
// was cached), one with v1 is not.
func TestCheckServesV1(t *testing.T) {
	const host = "https://example.test"
	release4 := minitaskGroup("v1beta1", "v1alpha1")
	release5 := minitaskGroup("v1beta1", "v1", "v1alpha1")
	release6 := minitaskGroup("v1", "v1beta1", "v1alpha1")
	tests := map[string]struct {
		cached, fresh   []metav1.APIGroup
		want            string
		wantInvalidated bool
	}{
		"release 6":                       {cached: release6},
		"release 5":                       {cached: release5},
		"release 4, cached and still so":  {cached: release4, fresh: release4, wantInvalidated: true, want: "the cluster at https://example.test serves minitask.dev v1beta1, v1alpha1 but not v1: its minitask is older than release 5, which this kubectl task needs; upgrade minitask there (docs/upgrading.md), or use the kubectl task of its release"},
		"release 4 in the cache, 5 now":   {cached: release4, fresh: release5, wantInvalidated: true},
		"no minitask":                     {cached: []metav1.APIGroup{{Name: "apps"}}, fresh: []metav1.APIGroup{{Name: "apps"}}, wantInvalidated: true, want: "the cluster at https://example.test does not serve minitask.dev: minitask is not installed there; install it (release 5 or later), or choose another --context"},
		"no minitask in the cache, 6 now": {cached: nil, fresh: release6, wantInvalidated: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &cachedDiscovery{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}, cached: tc.cached, fresh: tc.fresh}
			got := ""
			if err := checkServesV1(d, host); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkServesV1 (-want +got):\n%s", diff)
			}
			if d.invalidated != tc.wantInvalidated {
				t.Errorf("cache invalidated: %t, want %t", d.invalidated, tc.wantInvalidated)
			}
		})
	}
}
