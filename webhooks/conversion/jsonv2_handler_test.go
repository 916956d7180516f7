//go:build goexperiment.jsonv2

package conversion

// An experiment, built only with GOEXPERIMENT=jsonv2 (Go's encoding/json/v2):
// a conversion handler that does what controller-runtime's does, with the
// same converters, but decodes and encodes with encoding/json/v2 in one pass
// per object. BenchmarkConversionHandler measures it as mode convert-jsonv2
// beside the standard handler and its floor; hack/bench.sh runs it. It is not
// what the manager serves: see docs/benchmarks.md for why.

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

func init() {
	experimentalHandlers = func(tb testing.TB, scheme *runtime.Scheme) []handlerMode {
		return []handlerMode{{"convert-jsonv2", newJSONv2Handler(tb, scheme)}}
	}
}

type jsonv2Handler struct {
	scheme     *runtime.Scheme
	converters map[schema.GroupKind]crconversion.Converter
}

func newJSONv2Handler(tb testing.TB, scheme *runtime.Scheme) *jsonv2Handler {
	h := &jsonv2Handler{scheme: scheme, converters: map[schema.GroupKind]crconversion.Converter{}}
	for gk, newConverter := range map[schema.GroupKind]func(*runtime.Scheme) (crconversion.Converter, error){
		{Group: v1beta1.GroupVersion.Group, Kind: "Task"}:    NewTaskConverter,
		{Group: v1beta1.GroupVersion.Group, Kind: "TaskRun"}: NewTaskRunConverter,
	} {
		c, err := newConverter(scheme)
		if err != nil {
			tb.Fatal(err)
		}
		h.converters[gk] = c
	}
	return h
}

type v2Review struct {
	APIVersion string      `json:"apiVersion,omitempty"`
	Kind       string      `json:"kind,omitempty"`
	Request    *v2Request  `json:"request,omitempty"`
	Response   *v2Response `json:"response,omitempty"`
}

type v2Request struct {
	UID               types.UID        `json:"uid"`
	DesiredAPIVersion string           `json:"desiredAPIVersion"`
	Objects           []jsontext.Value `json:"objects"`
}

type v2Response struct {
	UID              types.UID        `json:"uid"`
	ConvertedObjects []runtime.Object `json:"convertedObjects"`
	Result           metav1.Status    `json:"result"`
}

func (h *jsonv2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review := &v2Review{}
	if err := jsonv2.UnmarshalRead(r.Body, review); err != nil || review.Request == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	converted, err := h.convert(r.Context(), review.Request)
	response := &v2Response{UID: review.Request.UID, ConvertedObjects: converted,
		Result: metav1.Status{Status: metav1.StatusSuccess}}
	if err != nil {
		response = &v2Response{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}
	}
	review.Request, review.Response = nil, response
	_ = jsonv2.MarshalWrite(w, review)
}

func (h *jsonv2Handler) convert(ctx context.Context, req *v2Request) ([]runtime.Object, error) {
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return nil, err
	}
	converted := make([]runtime.Object, 0, len(req.Objects))
	for _, raw := range req.Objects {
		var typeMeta metav1.TypeMeta
		if err := jsonv2.Unmarshal(raw, &typeMeta); err != nil {
			return nil, err
		}
		gvk := typeMeta.GroupVersionKind()
		src, err := h.scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if err := jsonv2.Unmarshal(raw, src); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", gvk, err)
		}
		dst, err := h.scheme.New(desired.WithKind(gvk.Kind))
		if err != nil {
			return nil, err
		}
		dst.GetObjectKind().SetGroupVersionKind(desired.WithKind(gvk.Kind))
		converter, ok := h.converters[gvk.GroupKind()]
		if !ok || gvk.GroupVersion() == desired {
			return nil, fmt.Errorf("cannot convert %s to %s", gvk, desired)
		}
		if err := converter.ConvertObject(ctx, src, dst); err != nil {
			return nil, err
		}
		converted = append(converted, dst)
	}
	return converted, nil
}

// TestJSONv2HandlerAnswersAsTheStandardOne checks the experiment on every
// benchmark input: the same objects come back, whichever handler converts.
func TestJSONv2HandlerAnswersAsTheStandardOne(t *testing.T) {
	scheme := newTestScheme(t)
	standard, experiment := newConversionHandler(t, scheme), newJSONv2Handler(t, scheme)
	for _, input := range benchmarkInputs(t) {
		body := review(t, scheme, input.To, input.Objects(3)...)
		want, got := convertedObjects(t, scheme, standard, body), convertedObjects(t, scheme, experiment, body)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the json/v2 handler's objects differ (-standard +jsonv2):\n%s", input.Name(3), diff)
		}
	}
}

// convertedObjects posts body to h and decodes the objects it answers with.
func convertedObjects(t *testing.T, scheme *runtime.Scheme, h http.Handler, body []byte) []runtime.Object {
	recorder := httptest.NewRecorder()
	h.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body)))
	var answer struct {
		Response struct {
			ConvertedObjects []jsontext.Value `json:"convertedObjects"`
		} `json:"response"`
	}
	if err := jsonv2.Unmarshal(recorder.Body.Bytes(), &answer); err != nil {
		t.Fatalf("reading the answer: %v: %s", err, recorder.Body.Bytes())
	}
	decoder := crconversion.NewDecoder(scheme)
	var objects []runtime.Object
	for _, raw := range answer.Response.ConvertedObjects {
		obj, _, err := decoder.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, obj)
	}
	return objects
}
