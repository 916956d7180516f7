package storedversions

import (
	"slices"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TaskRuns is the CRD whose objects hold the times the rule is about.
const TaskRuns = "taskruns.minitask.dev"

// cleanVersions are the versions that only releases refusing times Go
// cannot read have stored: v1, stored from release 6. v1alpha1 (the first
// release's) and v1beta1 (release 2's, and 3 to 5's) are not among them.
var cleanVersions = []string{v1.GroupVersion.Version}

// MayHoldUnreadableTimes reports whether objects stored in the versions of
// storedVersions (a CRD's status.storedVersions) may hold a time Go cannot
// read: true unless the list names at least one version and only clean ones.
func MayHoldUnreadableTimes(storedVersions []string) bool {
	if len(storedVersions) == 0 {
		return true
	}
	for _, version := range storedVersions {
		if !slices.Contains(cleanVersions, version) {
			return true
		}
	}
	return false
}
