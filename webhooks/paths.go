package webhooks

import (
	"slices"

	"github.com/minitask-dev/minitask/webhooks/conditiontime"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/stashguard"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// ConfiguredPaths are the paths this release's configuration names: its
// webhook configuration (config/webhook/manifests.yaml) and its CRDs'
// conversion webhook (config/crd/patches).
func ConfiguredPaths() []string {
	return []string{
		conversion.Path,
		validation.Path, validation.TaskRunPath,
		stashguard.TaskPath, stashguard.TaskRunPath,
		conditiontime.Path,
	}
}

// KeptPaths are the paths that release 5's configuration names and this
// release's does not: served still, so that while a rolling update or a
// rollback runs one release's configuration against the other's replicas,
// no write is refused by a 404.
func KeptPaths() []string {
	return []string{validation.Release5Path, validation.Release5TaskRunPath}
}

// ServedPaths is every path SetupWithOptions serves, sorted:
// ConfiguredPaths and KeptPaths. Frozen with a release
// (test/e2e/testdata/release-N-webhook-paths.txt, written by
// hack/webhook-paths), it is what make verify-api holds the next release's
// configuration to: every path that configuration names, the release
// before already serves.
func ServedPaths() []string {
	paths := append(ConfiguredPaths(), KeptPaths()...)
	slices.Sort(paths)
	return paths
}
