package conversion

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// This file is the handler's only contact with a JSON codec:
// github.com/go-json-experiment/json, the future encoding/json/v2, which
// reads a review and writes its answer in one pass each. encoding/json,
// through apiextensions' ConversionReview, took five: the review, each
// object's bytes copied out of it, the typed decode, the typed encode
// into a RawExtension, and that RawExtension validated and copied again
// into the answer (docs/conversion.md, "The handler").
//
// The codec keeps encoding/json's meaning, through json/v1's options (the
// library's own emulation of encoding/json, tested against it), except
// where the API server's decoder differs: an object's member names match
// their fields case-sensitively, as sigs.k8s.io/json reads them.

// reviewOptions read a review's envelope as controller-runtime's handler
// does (encoding/json: names in any case, the first JSON value of the body,
// duplicate names and invalid UTF-8 accepted), but for encoding/json's check
// of the whole value's syntax before decoding it: a second pass over the
// body (100 MB for a LIST of 10,000 Tasks) that changes nothing here, since
// a review that fails to decode, for whatever reason, is answered 400 and
// dropped.
var reviewOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// answerOptions write an answer as encoding/json would, map keys sorted,
// but for escaping: encoding/json escapes <, > and & for HTML, which an
// API server reading JSON has no use for, and which costs time in every
// script (&&, 2>&1).
var answerOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false))

// objectOptions read an object as the API server's decoder does: member
// names matched case-sensitively, all else as encoding/json.
var objectOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.MatchCaseInsensitiveNames(false), timeReading)

// typedObjectOptions read an object decodeReview has read: objectOptions
// but for encoding/json's check of a value's whole syntax before it is
// decoded, a second pass over each object for nothing here, since
// decodeReview has checked every object's syntax (ReadValue). An object
// that does not decode is passed through, whatever the error says.
var typedObjectOptions = jsonv2.JoinOptions(objectOptions, jsonv1.ReportErrorsWithLegacySemantics(false))

// conversionReview is apiextensions.k8s.io/v1 ConversionReview as the
// handler reads and writes it: its objects are kept as their JSON text on
// the way in, and written as what they are (a typed object, or the JSON of
// an object passed through) on the way out, so that no object is encoded
// twice.
type conversionReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *conversionRequest  `json:"request,omitempty"`
	Response        *conversionResponse `json:"response,omitempty"`
}

type conversionRequest struct {
	UID               types.UID  `json:"uid"`
	DesiredAPIVersion string     `json:"desiredAPIVersion"`
	Objects           rawObjects `json:"objects"`
}

// rawObjects are a review's objects, each the JSON text of one, kept where
// it lies in the review's body rather than copied out of it: 100 MB less to
// allocate and copy for a LIST of 10,000 Tasks of 10 KB. This holds only
// because decodeReview's decoder parses the body in place, from a
// bytes.Buffer that nothing writes to once read (jsontext.NewDecoder); the
// values then stay valid for as long as the body is kept.
type rawObjects []jsontext.Value

// UnmarshalJSONFrom reads a JSON array of values, or null.
func (o *rawObjects) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	token, err := dec.ReadToken()
	switch {
	case err != nil:
		return err
	case token.Kind() == 'n':
		*o = nil
		return nil
	case token.Kind() != '[':
		return fmt.Errorf("objects: a JSON %s, want an array", token.Kind())
	}
	objects := rawObjects{}
	for dec.PeekKind() != ']' {
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		objects = append(objects, value)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*o = objects
	return nil
}

type conversionResponse struct {
	UID types.UID `json:"uid"`
	// ConvertedObjects are the JSON of each object converted, or passed
	// through, as encodeObject and withAPIVersion wrote it.
	ConvertedObjects []jsontext.Value `json:"convertedObjects"`
	Result           metav1.Status    `json:"result"`
}

// decodeReview reads a ConversionReview from the first JSON value of body,
// as encoding/json's Decoder does; what follows it is not read. size is
// the body's length if known (its Content-Length), else 0 or less.
//
// The body is read whole first, into a buffer of its size: the decoder
// then parses it in place, where reading from a stream would copy it into
// a buffer doubled again and again (for a 100 MB review, 200 MB more).
func decodeReview(body io.Reader, size int64) (*conversionReview, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(size, 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, err
	}
	review := &conversionReview{}
	if err := jsonv2.UnmarshalDecode(jsontext.NewDecoder(buf, reviewOptions), review, reviewOptions); err != nil {
		return nil, err
	}
	return review, nil
}

// encodeReview writes review, its response's objects as they are: each is
// JSON this package wrote (encodeObject, withAPIVersion), so that it need
// not be read again to be checked, as an encoder would (the converted
// objects of a large review are most of the time left to spend).
func encodeReview(w io.Writer, review *conversionReview) error {
	response := review.Response
	if response == nil || response.ConvertedObjects == nil {
		return jsonv2.MarshalWrite(w, review, answerOptions)
	}
	// {"kind":...,"apiVersion":...,"response":{"convertedObjects":[...],"uid":...,"result":...}}
	head, err := jsonv2.Marshal(review.TypeMeta, answerOptions)
	if err != nil {
		return err
	}
	tail, err := jsonv2.Marshal(struct {
		UID    types.UID     `json:"uid"`
		Result metav1.Status `json:"result"`
	}{response.UID, response.Result}, answerOptions)
	if err != nil {
		return err
	}
	out := &errWriter{w: w}
	out.Write(head[:len(head)-1]) // the type's members, without the closing brace
	if len(head) > 2 {
		out.WriteComma()
	}
	out.WriteString(`"response":{"convertedObjects":[`)
	for i, object := range response.ConvertedObjects {
		if i > 0 {
			out.WriteComma()
		}
		out.Write(object)
	}
	out.WriteString("],")
	out.Write(tail[1:]) // the response's other members, and its closing brace
	out.WriteString("}")
	return out.err
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

func (e *errWriter) WriteString(s string) { e.Write([]byte(s)) }
func (e *errWriter) WriteComma()          { e.WriteString(",") }

// encodeObject writes a converted object's JSON.
func encodeObject(object any) (jsontext.Value, error) {
	return jsonv2.Marshal(object, answerOptions)
}

// objectHeader is what the handler reads of an object before its typed
// decode: enough to pick the types. It leaves metadata alone, so that the
// extra pass over each object allocates next to nothing.
type objectHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// objectName is the part of the metadata logs name an object by.
type objectName struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// decodeHeader reads raw's apiVersion and kind. It reads the whole object,
// skipping all else, rather than stopping at the first apiVersion and kind:
// a name given twice means its last value, as it does to encoding/json and
// to the API server, and the typed decode that follows. Skipping is cheap
// next to that decode (a sixth of it for a 10 KB Task), and since
// decodeReview has checked the object's syntax, it is not checked twice.
func decodeHeader(raw []byte) (objectHeader, error) {
	var header objectHeader
	if err := jsonv2.Unmarshal(raw, &header, typedObjectOptions); err != nil {
		return header, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	return header, nil
}

func (n objectName) String() string { return n.Namespace + "/" + n.Name }

// nameOf reads raw's name and namespace, as far as its metadata lets them be
// read: only to label the log line of an object that could not be converted.
func nameOf(raw []byte) objectName {
	var object struct {
		Metadata objectName `json:"metadata"`
	}
	_ = jsonv2.Unmarshal(raw, &object, objectOptions)
	return object.Metadata
}

// decodeObject decodes raw into a typed object.
func decodeObject(raw []byte, into any) error {
	return jsonv2.Unmarshal(raw, into, typedObjectOptions)
}

// withAPIVersion returns raw, a JSON object, with its apiVersion set to
// apiVersion and every other member as it was.
func withAPIVersion(raw []byte, apiVersion string) ([]byte, error) {
	var members map[string]jsontext.Value
	if err := jsonv2.Unmarshal(raw, &members, objectOptions); err != nil {
		return nil, err
	}
	if members == nil {
		return nil, errors.New("not a JSON object")
	}
	version, err := jsonv2.Marshal(apiVersion, objectOptions)
	if err != nil {
		return nil, err
	}
	members["apiVersion"] = version
	return jsonv2.Marshal(members, objectOptions)
}
