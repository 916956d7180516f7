package stashguard

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The API server keeps a write to the main resource from changing status:
// its strategy puts the stored status back, but into the object in the
// version it was written, before conversion. A v1alpha1 object's stash
// carries status fields too (conditions, steps, results, attempts), so
// without this check a client allowed to update TaskRuns, but not their
// status, could set a run's results or attempts through the annotation.

// checkStatusUnchanged refuses a v1alpha1 write to the main resource whose
// v1beta1 form has a status other than the stored one (none, for a create).
// A client that writes back what it read carries the stash it read, whose
// status is the stored one.
func (g *guard[H, S, PH, PS]) checkStatusUnchanged(obj, old map[string]any) field.ErrorList {
	var oldStatus any
	if old != nil {
		oldStatus = old["status"]
	}
	if equality.Semantic.DeepEqual(emptyAsNil(obj["status"]), emptyAsNil(oldStatus)) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "annotations").Key(conversion.AnnotationConversionData), fmt.Sprintf(
		"it would change this %s's status, which only a write to the status subresource may; "+
			"leave %s as it was read, or write the status through the status subresource", g.kind, conversion.AnnotationConversionData))}
}

// emptyAsNil is nil for an absent or empty status, as JSON cannot tell
// them apart, and status otherwise.
func emptyAsNil(status any) any {
	if m, ok := status.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return status
}
