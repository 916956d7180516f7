package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// The handler the manager serves must answer as controller-runtime's
// handler (HandlerControllerRuntime, release 2's) does wherever that one
// converts: the same objects, as JSON values, in the same order. It may
// differ only where controller-runtime's fails the review on one object
// it cannot decode, and this one passes that object through
// (FuzzConversionHandler checks those), and in how it escapes strings,
// which no JSON reader sees.

// newControllerRuntimeHandler is controller-runtime's handler with the
// converters webhooks.SetupWithManager registers.
func newControllerRuntimeHandler(tb testing.TB, scheme *runtime.Scheme) http.Handler {
	tb.Helper()
	return crconversion.NewWebhookHandler(scheme, newTestRegistry(tb, scheme))
}

// checkAnswersAsControllerRuntime posts body to both handlers and, when
// controller-runtime's converts it, fails unless ours converted it to the
// same objects.
func checkAnswersAsControllerRuntime(tb testing.TB, ours, theirs http.Handler, body []byte) {
	tb.Helper()
	want, ok := convertedValues(tb, theirs, body)
	if !ok {
		return
	}
	got, ok := convertedValues(tb, ours, body)
	if !ok {
		tb.Fatalf("controller-runtime's handler converted a review ours did not: %.2000q", body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		tb.Errorf("converted objects differ from controller-runtime's (-theirs +ours):\n%s\nrequest: %.2000q", diff, body)
	}
}

// convertedValues posts body to h and returns the objects it converted, as
// JSON values, and whether it converted them.
func convertedValues(tb testing.TB, h http.Handler, body []byte) ([]any, bool) {
	tb.Helper()
	recorder := newRecorder()
	h.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	var answer apix.ConversionReview
	if recorder.Code != http.StatusOK || json.Unmarshal(recorder.Body.Bytes(), &answer) != nil ||
		answer.Response == nil || answer.Response.Result.Status != metav1.StatusSuccess {
		return nil, false
	}
	values := make([]any, 0, len(answer.Response.ConvertedObjects))
	for i, object := range answer.Response.ConvertedObjects {
		var value any
		if err := json.Unmarshal(object.Raw, &value); err != nil {
			tb.Fatalf("converted object %d is no JSON: %v", i, err)
		}
		values = append(values, value)
	}
	return values, true
}

// TestHandlerAnswersAsControllerRuntime checks every benchmark input, in
// sizes that take the handler through one goroutine and through several,
// and every fuzz seed.
func TestHandlerAnswersAsControllerRuntime(t *testing.T) {
	scheme := newTestScheme(t)
	ours, theirs := newConversionHandler(t, scheme), newControllerRuntimeHandler(t, scheme)
	forEachTestReview(t, scheme, func(t *testing.T, body []byte, isInput bool) {
		if _, ok := convertedValues(t, theirs, body); isInput && !ok {
			t.Fatal("controller-runtime's handler did not convert the review")
		}
		checkAnswersAsControllerRuntime(t, ours, theirs, body)
	})
}

// forEachTestReview runs check on a review of every benchmark input
// (isInput), in sizes that take the handler through one goroutine and
// through several, streamed and not, and on every fuzz seed.
func forEachTestReview(t *testing.T, scheme *runtime.Scheme, check func(t *testing.T, body []byte, isInput bool)) {
	for _, input := range benchmarkInputs(t) {
		for _, n := range []int{1, 3, 4 * objectsPerWorker} {
			t.Run(input.Name(n), func(t *testing.T) {
				check(t, review(t, scheme, input.To, input.Objects(n)...), true)
			})
		}
	}
	for _, seed := range handlerSeeds(t, scheme) {
		t.Run(seed.name, func(t *testing.T) { check(t, seed.body, false) })
	}
}
