package stashguard

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// This release keeps what it does not run yet of release 7
// (runstate.TaskSpecRelease7Fields and TaskRunRelease7Fields: a step's
// timeout, sidecars and a run's taskSpec) but refuses it at admission, in
// every version: a write may not add such a field, nor change one. What it
// runs already (a stepTemplate, a step's securityContext and
// imagePullPolicy) passes. An object that holds
// them already (stored by release 7, before a rollback) can still be
// written, labelled, cancelled and deleted, keeping or dropping them, and
// its run's status written by this release's controller.

// release7Field is one field only release 7 runs: its path in the write,
// the key it is matched by in the object it replaces (a step's by the
// step's name), and its value.
type release7Field struct {
	path  *field.Path
	key   string
	value any
}

// refuseRelease7 refuses each of fields that old (nil: none) does not hold
// under the same key with the same value.
func refuseRelease7(fields, old []release7Field) field.ErrorList {
	var errs field.ErrorList
	for _, f := range fields {
		kept := false
		for _, o := range old {
			if o.key == f.key {
				kept = sameJSON(o.value, f.value)
				break
			}
		}
		if !kept {
			errs = append(errs, field.Forbidden(f.path, runstate.Release7Needed))
		}
	}
	return errs
}

// taskRelease7 judges task, and old (nil on a create), by their v1 forms.
func taskRelease7(ctx context.Context, task, old *v1beta1.Task) field.ErrorList {
	fields := taskRelease7Fields(&conversion.V1TaskOf(ctx, task).Spec)
	if len(fields) == 0 {
		return nil
	}
	var held []release7Field
	if old != nil {
		held = taskRelease7Fields(&conversion.V1TaskOf(ctx, old).Spec)
	}
	return refuseRelease7(fields, held)
}

// taskRelease7Fields lists what of spec this release does not run yet, at the paths
// runstate.TaskSpecRelease7Fields gives (TestRelease7FieldsAreRunstates).
func taskRelease7Fields(spec *v1.TaskSpec) []release7Field {
	var fields []release7Field
	if len(spec.Sidecars) > 0 {
		fields = append(fields, release7Field{path: field.NewPath("spec", "sidecars"), key: "sidecars", value: spec.Sidecars})
	}
	return fields
}

// taskRunRelease7 judges run, and old (nil on a create), by their v1 forms.
func taskRunRelease7(ctx context.Context, run, old *v1beta1.TaskRun) field.ErrorList {
	fields := taskRunRelease7Fields(conversion.V1TaskRunOf(ctx, run))
	if len(fields) == 0 {
		return nil
	}
	var held []release7Field
	if old != nil {
		held = taskRunRelease7Fields(conversion.V1TaskRunOf(ctx, old))
	}
	return refuseRelease7(fields, held)
}

// taskRunRelease7Fields lists what of run only release 7 runs, at the
// paths runstate gives. A field inside the inline or the pinned spec is
// valued by that whole spec: it is kept only where the spec is (spec.taskSpec
// is immutable, and pinned.go refuses a change of status.taskSpec).
func taskRunRelease7Fields(run *v1.TaskRun) []release7Field {
	var fields []release7Field
	for _, path := range runstate.TaskRunRelease7Fields(run) {
		var value any
		switch p := path.String(); {
		case strings.HasPrefix(p, "spec.taskSpec."):
			value = run.Spec.TaskSpec
		case strings.HasPrefix(p, "status.taskSpec."):
			value = run.Status.TaskSpec
		case p == "status.sidecars":
			value = run.Status.Sidecars
		}
		fields = append(fields, release7Field{path: path, key: path.String(), value: value})
	}
	return fields
}

// sameJSON reports whether a and b are the same on the wire, as the API
// server stores them: a field is kept when what is written of it is what
// was stored. (A Duration keeps the text it was written as, which
// reflection cannot compare.)
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
