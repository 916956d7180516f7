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
package timerepair
