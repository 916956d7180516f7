package conversion

import (
	"unsafe"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// v1 kept every v1beta1 type but for params, the timeout and what release 7
// adds (a step's and a run status's new fields, which convert field by
// field) unchanged: the same fields, in the same order, of the same types,
// with the same JSON names. Those convert as Kubernetes' generated conversions convert
// identical types, by reinterpreting their memory rather than copying them
// field by field; TestSameShapeTypesAreIdentical holds each pair below to
// that, so that a field added to one version and not the other fails it
// instead of being read from the wrong place.
//
// Like every conversion here, the result shares memory with its source,
// which is never changed.

// sameShape reinterprets a *From as a *To; From and To must be one of the
// pairs TestSameShapeTypesAreIdentical checks.
func sameShape[To, From any](from *From) *To {
	return (*To)(unsafe.Pointer(from)) //nolint:gosec // identical layouts, held by TestSameShapeTypesAreIdentical
}

// sameShapeSlice reinterprets a []From as a []To, nil staying nil.
func sameShapeSlice[To, From any](from []From) []To {
	if from == nil {
		return nil
	}
	return *(*[]To)(unsafe.Pointer(&from)) //nolint:gosec // identical layouts, held by TestSameShapeTypesAreIdentical
}

// sameShapePairs are the v1beta1 and v1 types that sameShape converts, for
// TestSameShapeTypesAreIdentical.
var sameShapePairs = [][2]any{
	{v1beta1.WorkspaceDeclaration{}, v1.WorkspaceDeclaration{}},
	{v1beta1.ResultDeclaration{}, v1.ResultDeclaration{}},
	{v1beta1.WorkspaceBinding{}, v1.WorkspaceBinding{}},
	{v1beta1.PodTemplate{}, v1.PodTemplate{}},
	{v1beta1.TaskRef{}, v1.TaskRef{}},
	{v1beta1.StepState{}, v1.StepState{}},
	{v1beta1.RunResult{}, v1.RunResult{}},
	{v1beta1.Attempt{}, v1.Attempt{}},
	{v1beta1.Duration{}, v1.Duration{}},
}
