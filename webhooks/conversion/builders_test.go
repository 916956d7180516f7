package conversion

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The objects every case starts from, built with the shared wrappers, so that
// each case reads as what differs from them. Every one carries the same rich
// metadata, which every case thereby checks is passed through unchanged.

var (
	created  = metav1.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	started  = metav1.Date(2024, 5, 1, 10, 1, 0, 0, time.UTC)
	finished = metav1.Date(2024, 5, 1, 10, 6, 0, 0, time.UTC)
	later    = metav1.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
)

// testMeta is metadata with one of everything conversion must not change.
func testMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              "nightly",
		Namespace:         "ci",
		UID:               "0f6a3d52-6b1c-4c9e-9a51-6f0e2b7d9c11",
		ResourceVersion:   "4711",
		Generation:        3,
		CreationTimestamp: created,
		Labels:            map[string]string{"team": "build"},
		Annotations:       map[string]string{"example.com/note": "keep me"},
		Finalizers:        []string{"example.com/cleanup"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "5a1c",
			Controller: ptr.To(true),
		}},
	}
}

// hubTask is a v1beta1 Task with one step.
func hubTask() *wrappers.BetaTaskWrapper {
	return wrappers.BetaTask("", "").Meta(testMeta()).Step("build", "golang:1.26", "go build ./...")
}

// spokeTask is a v1alpha1 Task with the same step as hubTask.
func spokeTask() *wrappers.V1alpha1TaskWrapper {
	return wrappers.V1alpha1Task("", "").Meta(testMeta()).Step("build", "golang:1.26", "go build ./...")
}

// hubRun is a v1beta1 TaskRun of Task "build" that has no status.
func hubRun() *wrappers.BetaTaskRunWrapper {
	return wrappers.BetaTaskRun("", "", "build").Meta(testMeta())
}

// spokeRun is a v1alpha1 TaskRun of Task "build" that has no status.
func spokeRun() *wrappers.V1alpha1TaskRunWrapper {
	return wrappers.V1alpha1TaskRun("", "", "build").Meta(testMeta())
}

// succeeded returns a Succeeded condition with nothing but what the phase
// table sets.
func succeeded(status metav1.ConditionStatus, reason v1beta1.TaskRunReason, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: status, Reason: string(reason), LastTransitionTime: at}
}

// stash wraps the lost fields' JSON as the annotation holds it.
func stash(lostJSON string) string {
	return `{"v1beta1":` + lostJSON + `}`
}

// stashed is the conversion annotation that holds the given lost fields'
// JSON, as a key and a value: spokeRun().Annotation(stashed(`{...}`)).
func stashed(lostJSON string) (key, value string) {
	return AnnotationConversionData, stash(lostJSON)
}

// checkToHub converts spoke with convert, as a table case does, and reports
// how the hub object it gives differs from want.
func checkToHub[S, H any](t *testing.T, convert func(context.Context, *S, *H) error, spoke *S, want *H) {
	t.Helper()
	checkConversion(t, "converting to the hub", convert, spoke, want)
}

// checkFromHub converts hub with convert, as a table case does, and reports
// how the spoke object it gives differs from want.
func checkFromHub[H, S any](t *testing.T, convert func(context.Context, *H, *S) error, hub *H, want *S) {
	t.Helper()
	checkConversion(t, "converting from the hub", convert, hub, want)
}

// checkConversion converts in with convert and reports, under what, how the
// object it gives differs from want.
func checkConversion[In, Out any](t *testing.T, what string, convert func(context.Context, *In, *Out) error, in *In, want *Out) {
	t.Helper()
	got := new(Out)
	if err := convert(t.Context(), in, got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: mismatch (-want +got):\n%s", what, diff)
	}
}
