// Package timerepair rewrites, once at the manager's start, the times of
// stored TaskRuns that the API server accepted but Go cannot read.
//
// Release 2's CRDs checked times only against OpenAPI's date-time format,
// which admits 2024-05-01t10:00:00z; metav1.Time decodes RFC 3339 only, with
// an upper-case T and Z. One such TaskRun makes every typed LIST of TaskRuns
// fail to decode: conversion passes it through (webhooks/conversion), as
// stored, so the controller's own cache of v1beta1 runs (which release 2
// stored, and which needed no conversion until release 6 stored v1) could
// not decode it, and would never sync. Today's CRDs refuse such times; this
// repairs the ones stored before, writing the same instant in RFC 3339.
//
// When it runs. Only the first release (storing v1alpha1) and release 2
// (storing v1beta1) let such times in; from release 3 every version's
// rules refuse them, and a run that holds one stays stored in its version
// until it is repaired, keeping that version in the CRD's
// status.storedVersions (internal/storedversions says why). So each pass
// first reads the TaskRun CRD, and is made only while storedVersions lists
// a version other than v1, the one release 6 stores: after a completed
// migration to v1 ([v1]) a start reads no run at all, where it listed every
// one through v1beta1, a conversion review each. An empty list, a version
// this release does not know, or a CRD it cannot read, make the pass.
//
// What it lists. A LIST returns every run, whatever version each is stored
// in, each converted to the version asked for, so one LIST through one
// version visits every run once, and a LIST per stored version would visit
// each again. The repair lists through v1beta1, the version that the runs
// which may hold such times are stored in (releases 2 to 5 stored it;
// v1alpha1 runs of the first release were moved to it by release 2's
// migration, or keep v1alpha1 in storedVersions, which makes the pass run
// all the same). Those runs come as stored, without a review, and are
// patched through v1beta1 too, so that the API server applies the patch to
// the stored form: through v1, conversion would pass such a run through as
// stored and the API server prune what v1 names otherwise (spec.timeout).
// While a migration to v1 is under way (storedVersions [v1beta1 v1]) the
// runs it has already rewritten come through a review each, as every run
// did before; once it ends, the repair reads nothing.
package timerepair
