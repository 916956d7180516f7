package stashguard

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kjson "sigs.k8s.io/json"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// object is a pointer to an API type.
type object[T any] interface {
	*T
	client.Object
}

// guard judges the writes of one kind (H its v1beta1 type, whose rules it
// judges by, the storage version until release 5; S its v1alpha1 one) that
// reach it through its webhook's match conditions: every v1alpha1 and v1
// write, and v1beta1 writes that carry a conversion annotation or are big
// enough that their v1alpha1 annotations might pass the API server's limit.
// With matchPolicy Exact it receives each object in the version it was
// written, oldObject as the client saw it included, and converts with the
// functions the API server's conversion calls, to its v1beta1 form. The
// names that say hub (H, toHub, judgeHubWrite) date from releases 2 to 4,
// when v1beta1 was the conversion hub; from release 5 the hub is v1, and
// from release 6 v1 is stored.
type guard[H, S any, PH object[H], PS object[S]] struct {
	kind  string
	rules *hubRules
	// toHub converts a v1alpha1 object to its v1beta1 form (through v1,
	// as the API server's conversion does).
	toHub func(context.Context, PS, PH) error
	// fromV1 decodes a v1 object and converts it to its v1beta1 form.
	fromV1 func(context.Context, []byte) (PH, error)
	// pin refuses, by their v1 forms, a spoke's write of a v1beta1 form
	// over old (nil: none) that forges or changes a run's pinned spec
	// (pinned.go); v1Pin a v1 status write's, from the raw objects. Both
	// nil for Tasks.
	pin   func(ctx context.Context, obj, old PH, status bool) field.ErrorList
	v1Pin func(raw, oldRaw []byte) field.ErrorList
	// stashed names the fields the stash carries, for messages.
	stashed string
	// storedVersions says whether a stored object may still be one no
	// typed decode takes; nil says it may (see judgeV1Write).
	storedVersions StoredVersions
}

// StoredVersions says whether objects stored in the versions a CRD's
// status.storedVersions lists may hold a time Go cannot read (release 2's),
// as storedversions.Watcher does from a watch of the CRD.
type StoredVersions interface {
	MayHoldUnreadableTimes() bool
}

// mayHoldUndecodable reports whether a stored object may be one no typed
// decode takes: unless told otherwise, it may.
func (g *guard[H, S, PH, PS]) mayHoldUndecodable() bool {
	return g.storedVersions == nil || g.storedVersions.MayHoldUnreadableTimes()
}

var _ admission.Handler = &guard[v1beta1.Task, v1alpha1.Task, *v1beta1.Task, *v1alpha1.Task]{}

// Handle refuses a write that would lose or forge what the conversion
// annotation carries: see the package documentation.
func (g *guard[H, S, PH, PS]) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var errs field.ErrorList
	switch req.Kind.Version {
	case v1alpha1.GroupVersion.Version:
		errs = g.judgeSpokeWrite(ctx, req)
	case v1beta1.GroupVersion.Version:
		errs = g.judgeHubWrite(ctx, req)
	case v1.GroupVersion.Version:
		errs = g.judgeV1Write(ctx, req)
	default:
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("unknown version %q of %s", req.Kind.Version, g.kind))
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: g.kind}, req.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// judgeSpokeWrite judges a v1alpha1 write by its v1beta1 form, under every
// v1beta1 rule, and by the annotations of its v1alpha1 form.
// A write to an object whose stash was omitted is refused outright.
func (g *guard[H, S, PH, PS]) judgeSpokeWrite(ctx context.Context, req admission.Request) field.ErrorList {
	_, hub, err := g.decodeSpoke(ctx, req.Object.Raw)
	if err != nil {
		return field.ErrorList{g.undecodable(err)}
	}
	var oldHub PH
	if req.Operation == admissionv1.Update {
		oldSpoke, h, err := g.decodeSpoke(ctx, req.OldObject.Raw)
		if err != nil {
			return field.ErrorList{g.undecodable(err)}
		}
		// Omitted, as the marker says, or perhaps omitted unmarked: the
		// object's own annotations leave the marker no room.
		annotations := oldSpoke.GetAnnotations()
		if annotations[conversion.AnnotationConversionDataOmitted] == "true" || conversion.MarkerWouldNotFit(annotations) {
			return field.ErrorList{g.omitted()}
		}
		oldHub = h
	}

	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hub)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("the v1beta1 form of %s: %w", g.kind, err))}
	}
	var errs field.ErrorList
	var old map[string]any
	if oldHub == nil {
		errs = g.rules.validateCreate(ctx, obj)
	} else {
		old, err = runtime.DefaultUnstructuredConverter.ToUnstructured(oldHub)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, fmt.Errorf("the stored v1beta1 form of %s: %w", g.kind, err))}
		}
		if req.SubResource == "status" {
			errs = g.rules.validateStatusUpdate(ctx, obj, old)
		} else {
			errs = g.rules.validateUpdate(ctx, obj, old)
		}
	}
	if req.SubResource != "status" {
		errs = append(errs, g.checkStatusUnchanged(obj, old)...)
		errs = append(errs, g.checkSize(hub, nil)...)
	}
	return append(errs, g.checkPin(ctx, hub, oldHub, req.SubResource == "status")...)
}

// checkPin applies pin, if the kind has one.
func (g *guard[H, S, PH, PS]) checkPin(ctx context.Context, obj, old PH, status bool) field.ErrorList {
	if g.pin == nil {
		return nil
	}
	return g.pin(ctx, obj, old, status)
}

// judgeV1Write refuses a status write that forges or changes a run's pinned
// spec (pinned.go: decoding that alone, whatever storedVersions says), and one that takes the object's v1alpha1
// annotations past the API server's limit. The API server applies v1's
// own rules, and webhooks/validation v1's params; the guard judges its
// v1beta1 form. An object no typed decode takes (a time Go cannot read, stored by
// release 2) is refused, even a write that keeps it as it is, release 6's
// storage migration included: conversion would pass its stored v1beta1 form
// through to v1 as it is, and the API server prune what v1 names otherwise
// (spec.timeout). Once the time is repaired (internal/timerepair, at the
// manager's start), it converts and the write passes.
//
// A status write is judged for that alone, so it is not decoded at all
// where no such object can remain: when the CRD's storedVersions lists
// only versions that no release able to store such times wrote
// (storedversions). The controller's status writes, the most frequent of
// all, then cost the guard no decode.
func (g *guard[H, S, PH, PS]) judgeV1Write(ctx context.Context, req admission.Request) field.ErrorList {
	var pinErrs field.ErrorList
	if req.SubResource == "status" && g.v1Pin != nil && req.Operation == admissionv1.Update {
		pinErrs = g.v1Pin(req.Object.Raw, req.OldObject.Raw)
	}
	if req.SubResource == "status" && !g.mayHoldUndecodable() {
		return pinErrs
	}
	stored, err := g.fromV1(ctx, req.Object.Raw)
	if err != nil {
		return field.ErrorList{g.undecodable(err)}
	}
	var old PH
	if req.Operation == admissionv1.Update {
		if old, err = g.fromV1(ctx, req.OldObject.Raw); err != nil {
			old = nil
		}
	}
	if req.SubResource == "status" {
		return pinErrs
	}
	return append(pinErrs, g.checkSize(stored, old)...)
}

// judgeHubWrite refuses a v1beta1 write that takes the object's v1alpha1
// annotations past the API server's limit. An object already past it is
// let through (it reads through v1alpha1 without its stash), and so is one
// no typed decode takes: its v1alpha1 form is passed through as stored,
// with no stash. Status writes never reach it (match conditions), and
// judgeV1Write passes every v1 one: the controller, which writes v1 from
// release 6, must always be able to record how a run ends.
//
// A v1beta1 write that carries a conversion annotation is judged by what
// the annotation restores: text that no longer parses as the type the
// annotation gives it is refused, never dropped.
func (g *guard[H, S, PH, PS]) judgeHubWrite(ctx context.Context, req admission.Request) field.ErrorList {
	hub := PH(new(H))
	if err := kjson.UnmarshalCaseSensitivePreserveInts(req.Object.Raw, hub); err != nil {
		return nil
	}
	var old PH
	if req.Operation == admissionv1.Update {
		old = PH(new(H))
		if err := kjson.UnmarshalCaseSensitivePreserveInts(req.OldObject.Raw, old); err != nil {
			old = nil
		}
	}
	errs := conversion.CheckStashedTypes(hub)
	if errs = append(errs, g.checkPin(ctx, hub, old, false)...); len(errs) > 0 {
		return errs
	}
	return g.checkSize(hub, old)
}

// checkSize refuses hub when its v1alpha1 annotations, stash included, pass
// the API server's limit, unless old (when not nil) passed it already.
func (g *guard[H, S, PH, PS]) checkSize(hub, old PH) field.ErrorList {
	size, err := conversion.SpokeAnnotationsSize(hub)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata", "annotations"), err)}
	}
	if size <= conversion.MaxAnnotationsBytes {
		return nil
	}
	if old != nil {
		if oldSize, err := conversion.SpokeAnnotationsSize(old); err == nil && oldSize > conversion.MaxAnnotationsBytes {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), field.OmitValueType{}, fmt.Sprintf(
		"read through minitask.dev/v1alpha1, this %s needs %d bytes of annotations, more than the API server's limit of %d: "+
			"%s carries its %s for v1alpha1 clients; make them (or the annotations) shorter",
		g.kind, size, conversion.MaxAnnotationsBytes, conversion.AnnotationConversionData, g.stashed))}
}

// decodeSpoke decodes a v1alpha1 object and converts it to v1beta1 as the
// API server's conversion does, through v1.
func (g *guard[H, S, PH, PS]) decodeSpoke(ctx context.Context, raw []byte) (PS, PH, error) {
	spoke, hub := PS(new(S)), PH(new(H))
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, spoke); err != nil {
		return nil, nil, err
	}
	if err := g.toHub(ctx, spoke, hub); err != nil {
		return nil, nil, err
	}
	hub.GetObjectKind().SetGroupVersionKind(v1beta1.GroupVersion.WithKind(g.kind))
	return spoke, hub, nil
}

func (g *guard[H, S, PH, PS]) undecodable(err error) *field.Error {
	return field.Invalid(nil, field.OmitValueType{}, fmt.Sprintf(
		"this %s cannot be converted to minitask.dev/v1beta1 (%v); write it through minitask.dev/v1beta1", g.kind, err))
}

func (g *guard[H, S, PH, PS]) omitted() *field.Error {
	return field.Forbidden(field.NewPath("metadata", "annotations").Key(conversion.AnnotationConversionDataOmitted), fmt.Sprintf(
		"this %s's %s do not fit the annotations of its v1alpha1 form, so a v1alpha1 write would lose them; "+
			"write it through minitask.dev/v1beta1", g.kind, g.stashed))
}
