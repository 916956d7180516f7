package conversion

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

const (
	// roundTripsPerCase is how many random objects each kind and direction converts.
	roundTripsPerCase = 10_000
	// roundTripSeed makes failures reproducible.
	roundTripSeed = 20240501
	// maxRoundTripFailures keeps a broken converter's output readable.
	maxRoundTripFailures = 3
)

// TestRoundTrips checks the contract's losslessness: hub -> spoke -> hub and
// spoke -> hub -> spoke give back the original for random valid objects, with
// the middle object going through JSON as it does through the API server.
// Every conversion must also leave its source untouched, and a hub object
// must never carry the conversion annotation.
func TestRoundTrips(t *testing.T) {
	total, annotated := 0, 0
	t.Run("Task hub-spoke-hub", func(t *testing.T) {
		n, a := checkRoundTrips(t, 1, (*objectGenerator).hubTask, ConvertBetaTaskToAlpha, ConvertAlphaTaskToBeta, spokeMayCarryAnnotation)
		total, annotated = total+n, annotated+a
	})
	t.Run("Task spoke-hub-spoke", func(t *testing.T) {
		n, a := checkRoundTrips(t, 2, (*objectGenerator).spokeTask, ConvertAlphaTaskToBeta, ConvertBetaTaskToAlpha, hubNeverCarriesAnnotation)
		total, annotated = total+n, annotated+a
	})
	t.Run("TaskRun hub-spoke-hub", func(t *testing.T) {
		n, a := checkRoundTrips(t, 3, (*objectGenerator).hubTaskRun, ConvertBetaTaskRunToAlpha, ConvertAlphaTaskRunToBeta, spokeMayCarryAnnotation)
		total, annotated = total+n, annotated+a
	})
	t.Run("TaskRun spoke-hub-spoke", func(t *testing.T) {
		n, a := checkRoundTrips(t, 4, (*objectGenerator).spokeTaskRun, ConvertAlphaTaskRunToBeta, ConvertBetaTaskRunToAlpha, hubNeverCarriesAnnotation)
		total, annotated = total+n, annotated+a
	})
	t.Logf("%d random objects converted there and back; %d middle objects needed the annotation", total, annotated)
}

// middleRule says what the middle object of a round trip may hold.
type middleRule int

const (
	// spokeMayCarryAnnotation: the spoke holds the annotation only when
	// converting back without it would lose something.
	spokeMayCarryAnnotation middleRule = iota
	// hubNeverCarriesAnnotation: no hub object ever holds the annotation.
	hubNeverCarriesAnnotation
)

// deepCopier is an API object pointer with its generated DeepCopy.
type deepCopier[T any] interface {
	*T
	metav1.Object
	DeepCopy() *T
}

// checkRoundTrips converts roundTripsPerCase random objects there and back,
// reports up to maxRoundTripFailures differences and returns how many it ran
// and how many of their middle objects carried the conversion annotation.
func checkRoundTrips[A, B any, PA deepCopier[A], PB deepCopier[B]](
	t *testing.T, seedOffset uint64,
	random func(*objectGenerator) PA,
	there func(context.Context, PA, PB) error,
	back func(context.Context, PB, PA) error,
	rule middleRule,
) (ran, annotatedMiddles int) {
	ctx := t.Context()
	g := newObjectGenerator(roundTripSeed + seedOffset)
	failures := 0
	fail := func(i int, format string, args ...any) {
		t.Helper()
		failures++
		t.Errorf("object %d (seed %d): "+format, append([]any{i, roundTripSeed + seedOffset}, args...)...)
		if failures >= maxRoundTripFailures {
			t.FailNow()
		}
	}

	for i := range roundTripsPerCase {
		original := random(g)
		pristine := original.DeepCopy()

		middle := PB(new(B))
		if err := there(ctx, original, middle); err != nil {
			fail(i, "converting there: %v", err)
			continue
		}
		middle = throughJSON(t, middle)
		pristineMiddle := middle.DeepCopy()
		result := PA(new(A))
		if err := back(ctx, middle, result); err != nil {
			fail(i, "converting back: %v", err)
			continue
		}

		if !reflect.DeepEqual(PA(pristine), original) {
			fail(i, "converting there changed its source (-before +after):\n%s", cmp.Diff(PA(pristine), original))
		}
		if !reflect.DeepEqual(PB(pristineMiddle), middle) {
			fail(i, "converting back changed its source (-before +after):\n%s", cmp.Diff(PB(pristineMiddle), middle))
		}
		if !sameOnTheWire(t, original, result) {
			fail(i, "round trip lost something (-original +result):\n%s\nmiddle: %s",
				wireDiff(t, original, result), mustJSON(t, middle))
		}
		_, annotated := middle.GetAnnotations()[AnnotationConversionData]
		if annotated {
			annotatedMiddles++
		}
		switch {
		case annotated && rule == hubNeverCarriesAnnotation:
			fail(i, "a hub object carries the conversion annotation: %s", mustJSON(t, middle))
		case annotated && rule == spokeMayCarryAnnotation && !annotationNeeded(ctx, t, middle, back, original):
			fail(i, "the annotation is written though nothing would be lost: %s", mustJSON(t, middle))
		}
	}
	return roundTripsPerCase, annotatedMiddles
}

// annotationNeeded reports whether converting middle back without its
// conversion annotation would differ from want.
func annotationNeeded[A, B any, PA deepCopier[A], PB deepCopier[B]](
	ctx context.Context, t *testing.T, middle PB, back func(context.Context, PB, PA) error, want PA,
) bool {
	stripped := PB(middle.DeepCopy())
	annotations := stripped.GetAnnotations()
	delete(annotations, AnnotationConversionData)
	stripped.SetAnnotations(annotations)
	result := PA(new(A))
	if err := back(ctx, stripped, result); err != nil {
		t.Fatalf("converting back: %v", err)
	}
	return !sameOnTheWire(t, want, result)
}

// sameOnTheWire reports whether a and b encode to the same JSON, which is
// all the API server keeps: an empty list is an absent one, and times are
// whole seconds. It is much faster than cmp, which only explains differences.
func sameOnTheWire(t *testing.T, a, b any) bool {
	return mustJSON(t, a) == mustJSON(t, b)
}

// wireDiff explains how a and b differ on the wire: with cmp where it can
// tell, else (null against [] in a required list, say) with both encodings.
func wireDiff(t *testing.T, a, b any) string {
	if diff := cmp.Diff(a, b, cmpopts.EquateEmpty()); diff != "" {
		return diff
	}
	return "-" + mustJSON(t, a) + "\n+" + mustJSON(t, b)
}

// throughJSON returns obj as the API server would pass it on: encoded, then
// decoded into a fresh object.
func throughJSON[T any, PT deepCopier[T]](t *testing.T, obj PT) PT {
	out := PT(new(T))
	if err := json.Unmarshal([]byte(mustJSON(t, obj)), out); err != nil {
		t.Fatalf("decoding %T: %v", obj, err)
	}
	return out
}

func mustJSON(t testing.TB, obj any) string {
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encoding %T: %v", obj, err)
	}
	return string(data)
}

// The generators' objects must fit the converters they feed.
var (
	_ func(*objectGenerator) *v1beta1.Task     = (*objectGenerator).hubTask
	_ func(*objectGenerator) *v1alpha1.TaskRun = (*objectGenerator).spokeTaskRun
)
