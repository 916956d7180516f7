package timerepair

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/minitask-dev/minitask/internal/perobject"
)

// IncompleteError says that some TaskRuns keep times Go cannot read because
// the API server refused their patch (an admission policy, or another field
// of theirs that no longer validates, say). Every other run was repaired.
type IncompleteError struct {
	// Failed are the runs not repaired, each with its error.
	Failed perobject.Failures
}

func (e *IncompleteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d TaskRun", len(e.Failed))
	if len(e.Failed) != 1 {
		b.WriteString("s")
	}
	b.WriteString(" not repaired")
	b.WriteString(e.Failed.Named())
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
