package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// duplexRecorder is an httptest.ResponseRecorder that lets a handler
// write while it still reads the body, as net/http's own writer does once
// told (http.ResponseController's EnableFullDuplex): the recorder alone
// cannot, and the handler would hold every review whole.
type duplexRecorder struct{ *httptest.ResponseRecorder }

func (duplexRecorder) EnableFullDuplex() error { return nil }

func newRecorder() duplexRecorder { return duplexRecorder{httptest.NewRecorder()} }

// postReview posts body to h and returns the HTTP status and the answer,
// when there is one.
func postReview(t testing.TB, h http.Handler, body []byte) (int, *apix.ConversionResponse) {
	t.Helper()
	recorder := newRecorder()
	h.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	if recorder.Code != http.StatusOK {
		return recorder.Code, nil
	}
	var answer apix.ConversionReview
	if err := json.Unmarshal(recorder.Body.Bytes(), &answer); err != nil || answer.Response == nil {
		t.Fatalf("unreadable answer (%v): %s", err, recorder.Body.Bytes())
	}
	var request metav1.TypeMeta
	if json.Unmarshal(body, &request) == nil && answer.TypeMeta != request {
		t.Errorf("answer is a %s %s, want the request's %s %s", answer.APIVersion, answer.Kind, request.APIVersion, request.Kind)
	}
	return recorder.Code, answer.Response
}

// TestHandlerPassesThroughWhatDoesNotDecode: one TaskRun with lower-case
// times among good ones comes back as stored but for its apiVersion, the
// others converted; it is logged by name and counted.
func TestHandlerPassesThroughWhatDoesNotDecode(t *testing.T) {
	scheme := newTestScheme(t)
	var logged []string
	h := NewHandler(scheme, newTestRegistry(t, scheme)).(*handler)
	h.log = funcr.New(func(_, args string) {
		// json/v2 words a decoding error "cannot" or "unable to", chosen
		// once per process so that no one depends on the wording
		// (errorModalVerb): the test reads it one way.
		logged = append(logged, strings.Replace(args, "json: unable to ", "json: cannot ", 1))
	}, funcr.Options{})

	good := mustJSON(t, typed(t, scheme, finishedRun(1)))
	bad := lowercaseTimes(mustJSON(t, typed(t, scheme, finishedRun(2))))
	before, tasksBefore := passthroughCount(t, "TaskRun"), passthroughCount(t, "Task")

	code, response := postReview(t, h, rawReview(alphaVersion, good, bad, good))
	if code != http.StatusOK || response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("HTTP %d, result %+v; want the review to succeed", code, response)
	}
	if len(response.ConvertedObjects) != 3 {
		t.Fatalf("%d objects back, want 3", len(response.ConvertedObjects))
	}
	for _, i := range []int{0, 2} {
		if !strings.Contains(string(response.ConvertedObjects[i].Raw), `"phase":"Succeeded"`) {
			t.Errorf("object %d was not converted: %s", i, response.ConvertedObjects[i].Raw)
		}
	}
	checkPassedThrough(t, 1, []byte(bad), response.ConvertedObjects[1].Raw, alphaVersion)
	if got := passthroughCount(t, "TaskRun") - before; got != 1 {
		t.Errorf("minitask_conversion_passthrough_total{kind=TaskRun} rose by %v, want 1", got)
	}
	if got := passthroughCount(t, "Task") - tasksBefore; got != 0 {
		t.Errorf("minitask_conversion_passthrough_total{kind=Task} rose by %v, want 0", got)
	}
	want := []string{`"msg"="Passing an object through unconverted" ` +
		`"error"="decoding: json: cannot unmarshal into Go *v1.Time within \"/metadata/creationTimestamp\": parsing time \"2024-05-01t10:00:00z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"t10:00:00z\" as \"T\"" ` +
		`"review"="0f6a3d52" "kind"="TaskRun" "namespace"="ci" "name"="build-00002" "apiVersion"="minitask.dev/v1beta1" "desiredAPIVersion"="minitask.dev/v1alpha1"`}
	if diff := cmp.Diff(want, logged); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// TestHandlerBoundsTheBody: a review over the bound is refused, before it
// is read when its Content-Length says so, else when the bound is passed.
func TestHandlerBoundsTheBody(t *testing.T) {
	scheme := newTestScheme(t)
	body := review(t, scheme, alphaVersion, finishedRun(1))
	for name, length := range map[string]int64{"Content-Length": int64(len(body)), "no Content-Length": -1} {
		t.Run(name, func(t *testing.T) {
			h := NewHandler(scheme, newTestRegistry(t, scheme)).(*handler)
			post := func() int {
				recorder := newRecorder()
				request := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
				request.ContentLength = length
				h.ServeHTTP(recorder, request)
				return recorder.Code
			}
			h.maxBytes = int64(len(body))
			if code := post(); code != http.StatusOK {
				t.Errorf("a review of exactly the bound got HTTP %d, want 200", code)
			}
			h.maxBytes--
			if code := post(); code != http.StatusRequestEntityTooLarge {
				t.Errorf("a review one byte over the bound got HTTP %d, want 413", code)
			}
		})
	}
}

// panickingConverter stands for a converter with a bug.
type panickingConverter struct{}

func (panickingConverter) ConvertObject(context.Context, runtime.Object, runtime.Object) error {
	panic("converter bug")
}

// TestHandlerFailsTheReviewOnAPanic: on the handler's goroutine (one
// object) or on the goroutines that share out a large review, a panic is
// recovered and fails the review, and the process lives on.
func TestHandlerFailsTheReviewOnAPanic(t *testing.T) {
	scheme := newTestScheme(t)
	registry := crconversion.NewRegistry()
	if err := registry.RegisterConverter(schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: "Task"}, panickingConverter{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 4 * objectsPerWorker} {
		t.Run(fmt.Sprintf("%d objects", n), func(t *testing.T) {
			tasks := repeat(n, func(int) runtime.Object { return hubTask().Obj() })
			code, response := postReview(t, NewHandler(scheme, registry), review(t, scheme, alphaVersion, tasks...))
			want := metav1.Status{Status: metav1.StatusFailure, Message: panicMessage}
			if code != http.StatusOK || !cmp.Equal(want, response.Result) || response.ConvertedObjects != nil {
				t.Errorf("HTTP %d, result %+v; want 200 and %+v, no objects", code, response, want)
			}
		})
	}
}

// TestHandlerFailuresNameWhatIsUnknown: a review fails, as controller-
// runtime's does, only for what no stored object of ours can be, and says
// what.
func TestHandlerFailuresNameWhatIsUnknown(t *testing.T) {
	scheme := newTestScheme(t)
	h := NewHandler(scheme, newTestRegistry(t, scheme))
	tests := map[string]struct {
		body []byte
		want string
	}{
		"unknown kind": {
			body: rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Pipeline"}`),
			want: `object 0: unknown kind "Pipeline" of group "minitask.dev"`,
		},
		"unknown desired version": {
			body: rawReview("minitask.dev/v2", `{"apiVersion":"minitask.dev/v1beta1","kind":"Task"}`),
			want: `object 0: unknown desired version "minitask.dev/v2" of Task`,
		},
		"unknown version of the object": {
			body: rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v2","kind":"TaskRun"}`),
			want: `object 0: unknown version "v2" of TaskRun`,
		},
		"no apiVersion": {
			body: rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Task"}`, `{"kind":"Task"}`),
			want: `object 1: object has no apiVersion or no kind ("", "Task")`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, response := postReview(t, h, tc.body)
			if response == nil || response.Result.Status != metav1.StatusFailure || !strings.HasPrefix(response.Result.Message, tc.want) {
				t.Errorf("answer %+v, want a Failure starting %q", response, tc.want)
			}
		})
	}
}

// passthroughCount reads minitask_conversion_passthrough_total{kind}.
func passthroughCount(t *testing.T, kind string) float64 {
	t.Helper()
	var m dto.Metric
	if err := passthroughTotal.WithLabelValues(kind).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
