package timerepair

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// failures are the TaskRuns a repair could not patch, each with its error.
type failures map[types.NamespacedName]error

// keys returns the runs sorted, so that messages are stable.
func (f failures) keys() []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return keys
}

// maxNamedFailures is how many runs an IncompleteError names; its count
// and the log lines of each failure give the rest.
const maxNamedFailures = 3

// IncompleteError says that some TaskRuns keep times Go cannot read because
// the API server refused their patch (an admission policy, or another field
// of theirs that no longer validates, say). Every other run was repaired.
type IncompleteError struct {
	// Failed are the runs not repaired, each with its error.
	Failed map[types.NamespacedName]error
}

func (e *IncompleteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d TaskRun", len(e.Failed))
	if len(e.Failed) != 1 {
		b.WriteString("s")
	}
	b.WriteString(" not repaired")
	for i, key := range failures(e.Failed).keys() {
		if i == maxNamedFailures {
			fmt.Fprintf(&b, "; and %d more", len(e.Failed)-maxNamedFailures)
			break
		}
		fmt.Fprintf(&b, "; %v", e.Failed[key])
	}
	return b.String()
}

// changedSinceRead reports whether err says that the run's patch did not
// apply because the run was written since the repair read it: a test
// operation failed, or a path it replaces is gone. The API server answers
// such a patch with a bare 422 (no kind, name or causes), unlike a
// validation refusal, which names the object and its fields.
func changedSinceRead(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details == nil || (details.Name == "" && details.Kind == "" && len(details.Causes) == 0)
}

// unservable reports whether err says that the API server could not serve
// the request at all (unreachable, overloaded, timed out, or ctx ended)
// rather than refused this run: every other patch would fail the same way,
// so the pass stops and is tried again later (Start), instead of waiting
// out the same error for every run.
func unservable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
}
