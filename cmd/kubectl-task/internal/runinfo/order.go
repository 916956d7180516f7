package runinfo

import (
	"strings"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// StartedAt is when a run started, or, before it has, when it was created.
func StartedAt(run *v1.TaskRun) time.Time {
	if run.Status.StartTime != nil {
		return run.Status.StartTime.Time
	}
	return run.CreationTimestamp.Time
}

// NewestFirst orders runs by when they started, newest first; runs that
// started in the same second by when they were created, then by namespace,
// then by name, descending, so that greet-2 comes before greet-1. It is a
// comparison for slices.SortFunc: negative when a comes first.
func NewestFirst(a, b *v1.TaskRun) int {
	if ta, tb := StartedAt(a), StartedAt(b); !ta.Equal(tb) {
		return tb.Compare(ta)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	}
	if a.Namespace != b.Namespace {
		return strings.Compare(a.Namespace, b.Namespace)
	}
	return strings.Compare(b.Name, a.Name)
}
