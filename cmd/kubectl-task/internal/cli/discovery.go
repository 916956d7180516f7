package cli

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/discovery"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// The plugin reads and writes minitask.dev/v1 alone, which minitask serves
// from release 5 on. Before its first request it asks the cluster, through
// discovery cached on disk as kubectl caches it (--cache-dir), whether v1
// is served, so that against an older minitask it says so at once, rather
// than with a "no matches for kind" or a 404 from the first command that
// happens to read a Task. It does not fall back to v1beta1: that would keep
// a second copy of every command's reading and writing for a release that
// an upgrade to 5 leaves behind.

// minimumRelease is the oldest minitask release that serves v1.
const minimumRelease = "5"

// checkServesV1 returns nil when the cluster that d asks serves
// minitask.dev/v1, and otherwise an error naming what it serves. A cached
// answer that lacks v1 is checked again against the cluster, for an upgrade
// since it was cached; a cached answer with v1 is trusted, as kubectl trusts
// its cache until a request fails.
func checkServesV1(d discovery.CachedDiscoveryInterface, host string) error {
	served, err := minitaskVersions(d)
	if err == nil && !slices.Contains(served, v1.GroupVersion.Version) && !d.Fresh() {
		d.Invalidate()
		served, err = minitaskVersions(d)
	}
	if err != nil {
		return clusterError(err, host)
	}
	return notServedError(served, host)
}

// minitaskVersions lists the versions of minitask.dev the cluster serves,
// preferred first; none when minitask is not installed.
func minitaskVersions(d discovery.DiscoveryInterface) ([]string, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		if g.Name != v1.GroupVersion.Group {
			continue
		}
		versions := make([]string, len(g.Versions))
		for i, v := range g.Versions {
			versions[i] = v.Version
		}
		return versions, nil
	}
	return nil, nil
}

// notServedError says what to do when served, the versions of minitask.dev
// a cluster serves, lack v1; nil when they have it.
func notServedError(served []string, host string) error {
	switch {
	case slices.Contains(served, v1.GroupVersion.Version):
		return nil
	case len(served) == 0:
		return fmt.Errorf("the cluster at %s does not serve minitask.dev: minitask is not installed there; install it "+
			"(release %s or later), or choose another --context", host, minimumRelease)
	}
	return fmt.Errorf("the cluster at %s serves minitask.dev %s but not %s: its minitask is older than release %s, "+
		"which this kubectl task needs; upgrade minitask there (docs/upgrading.md), or use the kubectl task of its release",
		host, strings.Join(served, ", "), v1.GroupVersion.Version, minimumRelease)
}
