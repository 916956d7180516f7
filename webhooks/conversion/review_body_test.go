package conversion

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// A review of 100 MB held by a test would be most of what the test
// measures of the handler's heap: these reviews are written as the handler
// reads them, from one object's JSON, and its answer is read as it is
// written and dropped.

// reviewOrder is the order of a review's members.
type reviewOrder struct {
	name string
	// head and tail go before and after the objects, given the desired
	// version.
	head, tail func(desired string) string
}

var (
	// apiServerOrder is how the API server writes a review
	// (k8s.io/apiextensions-apiserver's webhook converter, through
	// encoding/json): kind, apiVersion, then the request's uid and
	// desiredAPIVersion before its objects, then an empty response.
	apiServerOrder = reviewOrder{
		name: "api-server",
		head: func(desired string) string {
			return `{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"0f6a3d52",` +
				`"desiredAPIVersion":"` + desired + `","objects":[`
		},
		tail: func(string) string {
			return `]},"response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}`
		},
	}
	// objectsFirstOrder lists the objects before anything else: what no API
	// server writes, and what a handler must hold whole to answer.
	objectsFirstOrder = reviewOrder{
		name: "objects-first",
		head: func(string) string { return `{"request":{"objects":[` },
		tail: func(desired string) string {
			return `],"desiredAPIVersion":"` + desired + `","uid":"0f6a3d52"},` +
				`"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1"}`
		},
	}
	reviewOrders = []reviewOrder{apiServerOrder, objectsFirstOrder}
)

// generatedReview is a ConversionReview of n objects, copies of one but for
// their names, written as it is read.
type generatedReview struct {
	head, tail []byte
	object     []byte // the JSON of the first object, named build-00000
	nameAt     []int  // where in object its name's number is
	n          int
	padding    int // spaces before the closing brace
}

// templateName is the name every object of benchmarkInputs gets for i = 0.
const templateName = "build-00000"

// newGeneratedReview is a review of n of input's objects to input.To, in
// order.
func newGeneratedReview(tb testing.TB, scheme *runtime.Scheme, input benchmarkInput, n int, order reviewOrder) *generatedReview {
	tb.Helper()
	object := []byte(mustJSON(tb, typed(tb, scheme, input.Objects(1)[0])))
	g := &generatedReview{head: []byte(order.head(input.To)), tail: []byte(order.tail(input.To)), object: object, n: n}
	for at := 0; ; {
		i := bytes.Index(object[at:], []byte(templateName))
		if i < 0 {
			break
		}
		at += i + len(templateName)
		g.nameAt = append(g.nameAt, at-5)
	}
	if len(g.nameAt) == 0 {
		tb.Fatalf("object %s is not named %s", object, templateName)
	}
	return g
}

// withSize pads g with whitespace to size bytes, the most objects that fit
// in it.
func (g *generatedReview) withSize(tb testing.TB, size int64) *generatedReview {
	tb.Helper()
	fixed := int64(len(g.head) + len(g.tail))
	g.n = int((size - fixed + 1) / int64(len(g.object)+1))
	g.padding = 0
	g.padding = int(size - g.size())
	if g.n <= 0 || g.padding < 0 {
		tb.Fatalf("no review of %d bytes holds these objects", size)
	}
	return g
}

// size is the review's length in bytes.
func (g *generatedReview) size() int64 {
	objects := int64(g.n) * int64(len(g.object)+1)
	if g.n > 0 {
		objects--
	}
	return int64(len(g.head)+len(g.tail)+g.padding) + objects
}

// reader writes the review as it is read.
func (g *generatedReview) reader() io.Reader {
	return io.MultiReader(bytes.NewReader(g.head), &objectsReader{g: g},
		bytes.NewReader(bytes.Repeat([]byte(" "), g.padding)), bytes.NewReader(g.tail))
}

// objectsReader writes g's objects, comma-separated, one at a time.
type objectsReader struct {
	g       *generatedReview
	next    int
	pending []byte
	buf     []byte
}

func (r *objectsReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.next == r.g.n {
			return 0, io.EOF
		}
		r.buf = r.buf[:0]
		if r.next > 0 {
			r.buf = append(r.buf, ',')
		}
		start := len(r.buf)
		r.buf = append(r.buf, r.g.object...)
		number := fmt.Appendf(nil, "%05d", r.next)
		for _, at := range r.g.nameAt {
			copy(r.buf[start+at:], number)
		}
		r.pending = r.buf
		r.next++
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// request is a POST of the review, with its Content-Length, as the API
// server sends it.
func (g *generatedReview) request() *http.Request {
	r := httptest.NewRequest(http.MethodPost, Path, g.reader())
	r.ContentLength = g.size()
	return r
}

// answerSink is an http.ResponseWriter that keeps only the status, the
// number of bytes written and the last of them, where the result is.
type answerSink struct {
	header http.Header
	code   int
	n      int64
	last   []byte
}

const answerSinkKeeps = 512

// EnableFullDuplex lets the handler answer while it reads, as net/http's
// own writer does (http.ResponseController).
func (s *answerSink) EnableFullDuplex() error { return nil }

func (s *answerSink) Header() http.Header {
	if s.header == nil {
		s.header = http.Header{}
	}
	return s.header
}

func (s *answerSink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

func (s *answerSink) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	s.n += int64(len(p))
	s.last = append(s.last, p...)
	if len(s.last) > answerSinkKeeps {
		s.last = append(s.last[:0], s.last[len(s.last)-answerSinkKeeps:]...)
	}
	return len(p), nil
}

// serveGenerated posts g to h and fails unless h converts it.
func serveGenerated(tb testing.TB, h http.Handler, g *generatedReview) {
	tb.Helper()
	sink := &answerSink{}
	h.ServeHTTP(sink, g.request())
	if sink.code != http.StatusOK || !bytes.Contains(sink.last, []byte(`"status":"Success"`)) {
		tb.Fatalf("HTTP %d, %d bytes, ending %s", sink.code, sink.n, sink.last)
	}
	// The objects come back, each about as large as it came.
	if sink.n < g.size()/2 {
		tb.Fatalf("an answer of %d bytes to a review of %d", sink.n, g.size())
	}
}
