package runinfo

import v1 "github.com/minitask-dev/minitask/apis/v1"

// TimeoutText is one of a run's timeouts (spec.timeouts.total or .pending)
// as describe and the dashboard show it: unset when the run sets none,
// "none (0s)" for 0, which bounds nothing, else the duration.
func TimeoutText(d *v1.Duration, unset string) string {
	switch {
	case d == nil:
		return unset
	case d.Duration == 0:
		return "none (0s)"
	default:
		return d.Duration.String()
	}
}
