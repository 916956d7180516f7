package stashguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// A run's status.taskSpec is the spec every attempt of it runs (API.md,
// "Pinned task spec"), which the controller writes once, through the status
// subresource, at the run's first Pod. A forged or altered one would make
// the run execute something other than its Task, whoever may edit the
// Task, so the guard refuses, in every version:
//   - a write that changes or removes a pinned spec;
//   - a write that sets one other than through the status subresource (a
//     v1 write to the main resource cannot, as the API server keeps status;
//     a spoke's can, in the conversion annotation's v1 member);
//   - a pin of an inline run other than its own spec.taskSpec.
//
// A CEL transition rule on the CRD would say the first, but an update rule
// on a stored field is evaluated on every write of every stored run
// (docs/api-compatibility.md), so it is said here.

// pinnedSpecs is what the pin rules read of a v1 TaskRun.
type pinnedSpecs struct {
	Spec struct {
		TaskSpec *v1.TaskSpec `json:"taskSpec,omitempty"`
	} `json:"spec"`
	Status struct {
		TaskSpec *v1.TaskSpec `json:"taskSpec,omitempty"`
	} `json:"status"`
}

// pinnedOf returns what the pin rules read of run.
func pinnedOf(run *v1.TaskRun) *pinnedSpecs {
	p := &pinnedSpecs{}
	p.Spec.TaskSpec, p.Status.TaskSpec = run.Spec.TaskSpec, run.Status.TaskSpec
	return p
}

// decodePinned reads the pin rules' fields of a v1 TaskRun's JSON, and
// nothing else of it: the controller's status writes, the most frequent of
// all, pass through here.
func decodePinned(raw []byte) (*pinnedSpecs, error) {
	p := &pinnedSpecs{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}

// judgePin refuses a write of run over old (nil: a create) that forges or
// changes status.taskSpec; status says that it is a status subresource
// write.
func judgePin(run, old *pinnedSpecs, status bool) field.ErrorList {
	path := field.NewPath("status", "taskSpec")
	pinned := run.Status.TaskSpec
	if old != nil && old.Status.TaskSpec != nil {
		if pinned == nil || !sameJSON(old.Status.TaskSpec, pinned) {
			return field.ErrorList{field.Forbidden(path,
				"it is the spec every attempt of the run runs, pinned at its first Pod, and cannot be changed or removed")}
		}
		return nil
	}
	switch {
	case pinned == nil:
		return nil
	case !status:
		return field.ErrorList{field.Forbidden(path,
			"only the controller sets it, through the status subresource, when it creates the run's first Pod")}
	case run.Spec.TaskSpec != nil && !sameJSON(run.Spec.TaskSpec, pinned):
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "a run that gives its spec inline runs that spec: "+
			"status.taskSpec must be spec.taskSpec")}
	}
	return nil
}

// taskRunPin judges by their v1 forms a spoke's write of run over old (nil:
// a create). Only a conversion annotation carries a spoke's
// status.taskSpec, so a write where neither has one needs no conversion.
func taskRunPin(ctx context.Context, run, old *v1beta1.TaskRun, status bool) field.ErrorList {
	_, has := run.GetAnnotations()[conversion.AnnotationConversionData]
	var oldPin *pinnedSpecs
	if old != nil {
		if _, oldHas := old.GetAnnotations()[conversion.AnnotationConversionData]; oldHas {
			oldPin = pinnedOf(conversion.V1TaskRunOf(ctx, old))
			has = true
		} else {
			oldPin = &pinnedSpecs{}
		}
	}
	if !has {
		return nil
	}
	return judgePin(pinnedOf(conversion.V1TaskRunOf(ctx, run)), oldPin, status)
}

// judgeV1Pin judges a v1 status write of a TaskRun, object and oldObject
// as raw JSON. A v1 write to the main resource cannot change status, and
// a create's status is dropped, so only status writes are judged. One
// that names no taskSpec at all, a Task's run not pinned yet, is not
// decoded; nor is one refused for bytes that do not decode (the status
// writes of a run stored by release 2 pass as they did: judgeV1Write), as
// the controller, which reads only what decodes, never runs such a spec.
func judgeV1Pin(raw, oldRaw []byte) field.ErrorList {
	if !bytes.Contains(raw, taskSpecKey) && !bytes.Contains(oldRaw, taskSpecKey) {
		return nil
	}
	// Every later status write of a pinned run, the controller's steps and
	// conditions, keeps the pin as the API server stored it: the same
	// bytes, which need no decoding (BenchmarkV1StatusWrite, pinned=true).
	if pin := rawPin(raw); pin != nil && bytes.Equal(pin, rawPin(oldRaw)) {
		return nil
	}
	run, err := decodePinned(raw)
	if err != nil {
		return nil
	}
	old, err := decodePinned(oldRaw)
	if err != nil {
		old = &pinnedSpecs{}
	}
	return judgePin(run, old, true)
}

// rawPin returns the bytes of status.taskSpec in a TaskRun's JSON; nil if
// it has none, it is null, or the JSON does not read (then the caller
// decodes it all). It reads nothing else but to skip it.
func rawPin(raw []byte) jsontext.Value {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if !enterObject(d) || !toMember(d, "status") || !enterObject(d) || !toMember(d, "taskSpec") {
		return nil
	}
	pin, err := d.ReadValue()
	if err != nil || pin.Kind() != '{' {
		return nil
	}
	return readToEnd(d, pin.Clone())
}

// toMember reads the members of the object d is in, skipping their
// values, up to the value of the one named name; false if there is none or
// the JSON does not read.
func toMember(d *jsontext.Decoder, name string) bool {
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if tok.String() == name {
			return true
		}
		if d.SkipValue() != nil {
			return false
		}
	}
	return false
}

// readToEnd reads the rest of d's JSON, which must read (no name twice in
// an object), and returns pin if it does.
func readToEnd(d *jsontext.Decoder, pin jsontext.Value) jsontext.Value {
	for {
		if _, err := d.ReadToken(); err != nil {
			if errors.Is(err, io.EOF) {
				return pin
			}
			return nil
		}
	}
}

// enterObject reads the start of a JSON object from d; false if the next
// value is anything else.
func enterObject(d *jsontext.Decoder) bool {
	if d.PeekKind() != '{' {
		return false
	}
	_, err := d.ReadToken()
	return err == nil
}

// taskSpecKey is how a TaskRun's JSON names either spec.
var taskSpecKey = []byte(`"taskSpec"`)

// sameJSON reports whether a and b are the same on the wire, as the API
// server stores them. (A Duration keeps the text it was written as, which
// reflection cannot compare.)
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
