package conversion

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"
)

// This file is the handler's only contact with a JSON codec, so that
// changing codecs (issue 16: github.com/go-json-experiment/json) changes
// it alone. Reviews are read as controller-runtime reads them
// (encoding/json, the body's first JSON value); objects as the API
// server's own decoder reads them (case-sensitive keys, integers kept as
// integers).

// decodeReview reads a ConversionReview from the request body.
func decodeReview(body io.Reader) (*apix.ConversionReview, error) {
	review := &apix.ConversionReview{}
	if err := json.NewDecoder(body).Decode(review); err != nil {
		return nil, err
	}
	return review, nil
}

// encodeReview writes review, converted objects included, as the response.
func encodeReview(w io.Writer, review *apix.ConversionReview) error {
	return json.NewEncoder(w).Encode(review)
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

// decodeHeader reads raw's apiVersion and kind.
func decodeHeader(raw []byte) (objectHeader, error) {
	var header objectHeader
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &header); err != nil {
		return header, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	return header, nil
}

// nameOf reads raw's name and namespace, as far as its metadata lets them be
// read: only to label the log line of an object that could not be converted.
func nameOf(raw []byte) objectName {
	var object struct {
		Metadata objectName `json:"metadata"`
	}
	_ = kjson.UnmarshalCaseSensitivePreserveInts(raw, &object)
	return object.Metadata
}

// decodeObject decodes raw into a typed object.
func decodeObject(raw []byte, into any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, into)
}

// withAPIVersion returns raw, a JSON object, with its apiVersion set to
// apiVersion and every other member as it was.
func withAPIVersion(raw []byte, apiVersion string) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, err
	}
	if members == nil {
		return nil, errors.New("not a JSON object")
	}
	version, err := json.Marshal(apiVersion)
	if err != nil {
		return nil, err
	}
	members["apiVersion"] = version
	return json.Marshal(members)
}
