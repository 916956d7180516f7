package conversion

import (
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// answer writes a review's answer as its objects are converted:
//
//	{"response":{"convertedObjects":[...],"uid":...,"result":...},"kind":...,"apiVersion":...}
//
// The objects come first: the uid, the result, and the review's kind and
// apiVersion (the request's, as controller-runtime's handler echoes them)
// are sure only once the whole review is read, and a JSON reader takes an
// object's members in any order. Each object is JSON this package wrote
// (encodeObject, withAPIVersion), written as it is, not read again to be
// checked as an encoder would (the converted objects of a large review are
// most of the time left to spend).
type answer struct {
	out     errWriter
	objects int
}

// object writes the next converted object.
func (a *answer) object(value jsontext.Value) {
	if a.objects == 0 {
		a.out.WriteString(`{"response":{"convertedObjects":[`)
	} else {
		a.out.WriteComma()
	}
	a.out.Write(value)
	a.objects++
}

// end writes what follows the objects. A review that failed before any
// object was written answers null objects, as controller-runtime's handler
// does; one that failed after, the objects written before it, which the
// API server drops with the rest of a failed answer.
func (a *answer) end(uid types.UID, result metav1.Status, typeMeta metav1.TypeMeta) error {
	switch {
	case a.objects > 0:
		a.out.WriteString("]")
	case result.Status == metav1.StatusSuccess:
		a.out.WriteString(`{"response":{"convertedObjects":[]`)
	default:
		a.out.WriteString(`{"response":{"convertedObjects":null`)
	}
	rest, err := jsonv2.Marshal(struct {
		UID    types.UID     `json:"uid"`
		Result metav1.Status `json:"result"`
	}{uid, result}, answerOptions)
	if err != nil {
		return err
	}
	meta, err := jsonv2.Marshal(typeMeta, answerOptions)
	if err != nil {
		return err
	}
	a.out.WriteComma()
	a.out.Write(rest[1:]) // the response's other members, and its closing brace
	if len(meta) > 2 {
		a.out.WriteComma()
		a.out.Write(meta[1 : len(meta)-1]) // kind and apiVersion, without braces
	}
	a.out.WriteString("}")
	return a.out.err
}

// errWriter writes to w until a write fails, and keeps that error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}

// WriteString writes s without a copy where w can (http.ResponseWriter
// can): a comma between each of 10,000 objects need not allocate.
func (e *errWriter) WriteString(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

func (e *errWriter) WriteComma() { e.WriteString(",") }
