package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A review of more than streamAfterBytes of objects is converted as it is
// read, and answered as it is converted: its answer begins before the rest
// of its body is read. It must answer as the same review read whole does,
// but where the rest of the body, read after the answer began, would have
// the review refused or changed (docs/conversion.md, "The handler").

// newStreamingHandler is the handler the manager serves, but streaming
// every review as soon as it holds one object and knows its desired
// version: small reviews, the fuzzer's, take the path of large ones.
func newStreamingHandler(tb testing.TB, scheme *runtime.Scheme) http.Handler {
	h := newConversionHandler(tb, scheme).(*handler)
	h.streamAfter = 1
	return h
}

// checkStreamsAsWhole posts body to whole (the handler as it ships) and to
// streaming (newStreamingHandler), and fails unless streaming answers as
// whole does. Only where the answer began before the rest of the body was
// read may it differ, by failing the review: a body that turns out no
// review (HTTP 400 read whole) may get a Failure (for the first thing found
// wrong), and one that names a member of the review or of its request
// twice, which may change objects already written (no API server writes
// one), may fail however.
func checkStreamsAsWhole(tb testing.TB, whole, streaming http.Handler, body []byte) {
	tb.Helper()
	wantCode, want := postReview(tb, whole, body)
	gotCode, got := postReview(tb, streaming, body)
	switch {
	case answeredSuccess(gotCode, got):
		if !answeredSuccess(wantCode, want) {
			tb.Fatalf("streamed, a review was converted that read whole got HTTP %d, %+v: %.2000q", wantCode, want, body)
		}
		if diff := cmp.Diff(answerValues(tb, want), answerValues(tb, got)); diff != "" || want.UID != got.UID {
			tb.Errorf("streamed, the answer differs (-whole +streamed):\n%s\nuid %q, %q\nrequest: %.2000q", diff, want.UID, got.UID, body)
		}
	case namesAMemberTwice(body):
	case wantCode == http.StatusBadRequest:
		if gotCode != http.StatusBadRequest && gotCode != http.StatusOK {
			tb.Errorf("a body that is no review got HTTP %d streamed; want 400, or a Failure: %.2000q", gotCode, body)
		}
	case wantCode != gotCode || !cmp.Equal(want.Result, got.Result):
		tb.Errorf("streamed, HTTP %d, %+v; read whole, HTTP %d, %+v: %.2000q", gotCode, got, wantCode, want, body)
	}
}

// TestHandlerStreamsAsWhole checks every review of forEachTestReview, as
// TestHandlerAnswersAsControllerRuntime does.
func TestHandlerStreamsAsWhole(t *testing.T) {
	scheme := newTestScheme(t)
	whole, streaming := newConversionHandler(t, scheme), newStreamingHandler(t, scheme)
	forEachTestReview(t, scheme, func(t *testing.T, body []byte, _ bool) {
		checkStreamsAsWhole(t, whole, streaming, body)
	})
}

func answeredSuccess(code int, response *apix.ConversionResponse) bool {
	return code == http.StatusOK && response.Result.Status == metav1.StatusSuccess
}

// answerValues are the objects of a response as JSON values.
func answerValues(tb testing.TB, response *apix.ConversionResponse) []any {
	tb.Helper()
	values := make([]any, len(response.ConvertedObjects))
	for i, object := range response.ConvertedObjects {
		if err := json.Unmarshal(object.Raw, &values[i]); err != nil {
			tb.Fatalf("converted object %d is no JSON: %v", i, err)
		}
	}
	return values
}

// namesAMemberTwice reports whether body's review, or its request, names a
// member twice, in any case (as encoding/json matches names).
func namesAMemberTwice(body []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	twice, _ := membersTwice(dec, 1)
	return twice
}

// membersTwice reads the object dec is at, and reports whether it names a
// member twice; below depth 0 it looks into its request member too.
func membersTwice(dec *jsontext.Decoder, depth int) (bool, error) {
	if token, err := dec.ReadToken(); err != nil || token.Kind() != '{' {
		return false, err
	}
	seen := map[string]bool{}
	twice := false
	for dec.PeekKind() != '}' {
		token, err := dec.ReadToken()
		if err != nil {
			return twice, err
		}
		name := strings.ToLower(token.String())
		twice = twice || seen[name]
		seen[name] = true
		if name == "request" && depth > 0 && dec.PeekKind() == '{' {
			inner, err := membersTwice(dec, depth-1)
			if twice = twice || inner; err != nil {
				return twice, err
			}
			continue
		}
		if err := dec.SkipValue(); err != nil {
			return twice, err
		}
	}
	_, err := dec.ReadToken()
	return twice, err
}

// TestHandlerFailsAStreamedReview: what the rest of a body holds once its
// answer has begun fails the review, with the objects already written
// (which the API server drops with the rest of a failed answer) and a
// message that says why; nothing of it is taken as valid.
func TestHandlerFailsAStreamedReview(t *testing.T) {
	scheme := newTestScheme(t)
	object := mustJSON(t, typed(t, scheme, finishedRun(1)))
	head := `{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":[` + object
	tests := map[string]struct {
		body     string
		size     int64 // the bound, if lowered
		want     string
		wantObjs int
	}{
		"malformed after the first object": {
			body: head + `,}`, want: "reading the conversion review, 1 objects in: jsontext: invalid character ','", wantObjs: 1,
		},
		"ended after the first object": {
			body: head + `,` + object, want: "reading the conversion review, 2 objects in: jsontext: unexpected EOF", wantObjs: 2,
		},
		"an object of an unknown kind after the first": {
			body: head + `,{"apiVersion":"minitask.dev/v1beta1","kind":"Pipeline"},` + object + `]}}`,
			want: `object 1: unknown kind "Pipeline" of group "minitask.dev"`, wantObjs: 1,
		},
		"objects given again": {
			body: head + `],"objects":[` + object + `]}}`,
			want: "conversion review gives its objects again after the first of them were converted", wantObjs: 1,
		},
		"another desiredAPIVersion after the objects": {
			body:     head + `],"desiredAPIVersion":"minitask.dev/v1beta1"}}`,
			want:     `conversion review gives desiredAPIVersion "minitask.dev/v1beta1" after its objects were converted to "minitask.dev/v1alpha1"`,
			wantObjs: 1,
		},
		"request null after the objects": {
			body: head + `]},"request":null}`, want: "conversion review gives its request again after its objects were converted", wantObjs: 1,
		},
		"over the bound after the first object, of no Content-Length": {
			body: head + `,` + object + `]}}`, size: int64(len(head) + 10),
			want: fmt.Sprintf("conversion review over %d bytes", len(head)+10), wantObjs: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newStreamingHandler(t, scheme).(*handler)
			if tc.size > 0 {
				h.maxBytes = tc.size
			}
			recorder := newRecorder()
			request := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
			request.ContentLength = -1 // as a chunked body comes
			h.ServeHTTP(recorder, request)
			var answer apix.ConversionReview
			if err := json.Unmarshal(recorder.Body.Bytes(), &answer); recorder.Code != http.StatusOK || err != nil || answer.Response == nil {
				t.Fatalf("HTTP %d (%v): %s", recorder.Code, err, recorder.Body.Bytes())
			}
			got := answer.Response
			if got.Result.Status != metav1.StatusFailure || !strings.HasPrefix(got.Result.Message, tc.want) || len(got.ConvertedObjects) != tc.wantObjs {
				t.Errorf("result %+v with %d objects; want a Failure starting %q with %d", got.Result, len(got.ConvertedObjects), tc.want, tc.wantObjs)
			}
		})
	}
}
