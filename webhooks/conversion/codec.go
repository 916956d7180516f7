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

// This file and answer.go are the handler's only contact with a JSON codec:
// github.com/go-json-experiment/json, the future encoding/json/v2, which
// reads a review as it comes in and writes its answer as each object is
// converted, in one pass each (review_stream.go). encoding/json,
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
// body (100 MB for a LIST of 10,000 Tasks), which would hold a body that
// streams whole, and changes nothing here, since a review that fails to
// decode, for whatever reason, is answered 400 (or failed, once its answer
// has begun) and dropped.
var reviewOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// answerOptions write an answer as encoding/json would, map keys sorted,
// but for escaping: encoding/json escapes <, > and & for HTML, which an
// API server reading JSON has no use for, and which costs time in every
// script (&&, 2>&1).
var answerOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false))

// objectAnswerOptions write a converted object: answerOptions, with the
// names the schemas default written even when empty (schema_defaults.go).
var objectAnswerOptions = jsonv2.JoinOptions(answerOptions, jsonv2.WithMarshalers(defaultedNameMarshalers))

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
// handler reads it: its request's objects are held as their JSON text, or
// handed to the conversion as they are read (objectList). The answer is
// written by answer.go, as its objects are converted.
type conversionReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *conversionRequest  `json:"request,omitempty"`
	Response        *conversionResponse `json:"response,omitempty"`
}

// newConversionReview is a review to decode into: its request is made
// beforehand, so that the handler can hand its objects a reviewStream.
func newConversionReview() *conversionReview {
	return &conversionReview{Request: &conversionRequest{}}
}

// request is the review's request, nil if the body gave none: no member,
// or null last.
func (r *conversionReview) request() *conversionRequest {
	if r.Request == nil || !r.Request.given {
		return nil
	}
	return r.Request
}

type conversionRequest struct {
	UID               types.UID  `json:"uid"`
	DesiredAPIVersion string     `json:"desiredAPIVersion"`
	Objects           objectList `json:"objects"`

	// given is whether the body gave this request (newConversionReview
	// makes one that a body may never fill).
	given bool
}

// requestMembers is conversionRequest without its method, decoded member
// by member as the library decodes any struct: names in any case, the last
// of a name given twice winning, as encoding/json.
type requestMembers conversionRequest

// UnmarshalJSONFrom marks the request given, and decodes it.
func (r *conversionRequest) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	r.given = true
	return jsonv2.UnmarshalDecode(dec, (*requestMembers)(r), dec.Options())
}

// objectList is a request's objects, each the JSON text of one: held
// (heldObjects) until their review streams, then handed to its
// reviewStream as each is read.
type objectList struct {
	held heldObjects
	// stream is the review's, on the request the handler decodes into;
	// nil on one the decoder made itself (a request given again after a
	// null), whose objects are only held.
	stream *reviewStream
}

// UnmarshalJSONFrom reads a JSON array of values, or null. A list given
// again replaces the one before, as in encoding/json.
func (o *objectList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readArray(dec, "objects", o.replace, func() error {
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return o.take(value)
	})
}

// replace drops what the list held before; one whose objects began to be
// converted cannot drop them, and says so to its stream.
func (o *objectList) replace() error {
	if o.stream != nil && o.stream.started {
		return o.stream.objectsGivenAgain()
	}
	o.held.reset()
	return nil
}

// take holds value, or hands it to the stream once the review streams; it
// is valid only until the next read (jsontext.Decoder.ReadValue).
func (o *objectList) take(value jsontext.Value) error {
	if o.stream == nil {
		o.held.add(value)
		return nil
	}
	return o.stream.take(value)
}

// conversionResponse is the response member a request may carry (the API
// server sends an empty one): read, so that what encoding/json refuses is
// refused, and dropped.
type conversionResponse struct {
	UID              types.UID     `json:"uid"`
	ConvertedObjects skippedValues `json:"convertedObjects"`
	Result           metav1.Status `json:"result"`
}

// skippedValues reads a JSON array of values, or null, and keeps only how
// many values it held.
type skippedValues int

func (n *skippedValues) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readArray(dec, "convertedObjects", func() error { *n = 0; return nil }, func() error {
		*n++
		return dec.SkipValue()
	})
}

// readArray reads a JSON array or null, the member what of an object:
// begin once it knows which, then each with the decoder at each value.
func readArray(dec *jsontext.Decoder, what string, begin, each func() error) error {
	token, err := dec.ReadToken()
	switch {
	case err != nil:
		return err
	case token.Kind() == 'n':
		return begin()
	case token.Kind() != '[':
		return fmt.Errorf("%s: a JSON %s, want an array", what, token.Kind())
	}
	if err := begin(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		if err := each(); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// readReview reads a ConversionReview from the first JSON value of body,
// as encoding/json's Decoder does; what follows it is not read. size is
// the body's length if known (its Content-Length), else -1.
//
// A body of a known size too small to stream (streamAfterBytes) is read
// whole first, into a buffer of its size: the decoder then parses it in
// place, and its objects are held where they lie in it. Any other is
// decoded as it is read, its objects copied out of the decoder's buffer.
func readReview(body io.Reader, size int64, review *conversionReview) error {
	if size < 0 || size > streamAfterBytes {
		return decodeReview(body, review)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(body); err != nil {
		return err
	}
	if review.Request != nil {
		review.Request.Objects.held.inPlace = true
	}
	return decodeReview(buf, review)
}

// decodeReview decodes the first JSON value of src into review. From a
// bytes.Buffer, which nothing writes to once read, the decoder parses in
// place (jsontext.NewDecoder), and the values it reads stay valid for as
// long as the buffer is kept.
func decodeReview(src io.Reader, review *conversionReview) error {
	return jsonv2.UnmarshalDecode(jsontext.NewDecoder(src, reviewOptions), review, reviewOptions)
}

// encodeObject writes a converted object's JSON.
func encodeObject(object any) (jsontext.Value, error) {
	if holdsDefaultedNames(object) {
		return jsonv2.Marshal(object, objectAnswerOptions)
	}
	// Neither defaulted name (a Task never holds one): no marshaler to look
	// up for each value.
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
