package apicompat

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// checkOrder refuses releases that are not oldest first. The last release is
// the one the version lifecycle and the storage version are checked against,
// so a release frozen at the wrong place in FROZEN_RELEASES would have the
// gate judge a change against an older release than the one a rollback by
// one release goes back to.
func checkOrder(releases []Release) error {
	var prev *utilversion.Version
	for i, r := range releases {
		v, err := utilversion.ParseSemantic(r.Version)
		if err != nil {
			return fmt.Errorf("release %s: version %q (its CRDs' %s): %w", r.Name, r.Version, ReleaseAnnotation, err)
		}
		if prev != nil && !prev.LessThan(v) {
			return fmt.Errorf("the frozen releases must be listed oldest first: %s (%s) comes after %s (%s)",
				r.Name, r.Version, releases[i-1].Name, releases[i-1].Version)
		}
		prev = v
	}
	return nil
}
