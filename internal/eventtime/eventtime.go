// Package eventtime reads core/v1 Events as the two APIs that write them leave
// them: the kubelet's recorder (core/v1: firstTimestamp, lastTimestamp,
// count) and events.k8s.io's (eventTime, series). The controller and kubectl
// task both read Events, and must agree on when one was last seen.
package eventtime

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// LastSeen is when e was last seen, whichever API wrote it: its series' last
// observation, its lastTimestamp, its eventTime, its firstTimestamp, else
// its creation.
func LastSeen(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
