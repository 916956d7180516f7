package conversion

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// Path is where the API server sends ConversionReviews (config/crd/patches,
// and envtest's default).
const Path = "/convert"

// The handlers --conversion-handler chooses from.
const (
	// HandlerMinitask is NewHandler: each object converted on its own, an
	// object that cannot be passed through, json/v2, on every processor.
	HandlerMinitask = "minitask"
	// HandlerControllerRuntime is controller-runtime's handler, with the
	// same converters: release 2's, which fails a whole review on one
	// object it cannot decode, and reads and writes with encoding/json. It
	// stays for one release, in case the new one misbehaves somewhere, and
	// goes in release 4.
	HandlerControllerRuntime = "controller-runtime"
)

// The body's bound comes from what the manager's Deployment
// (config/manager) can hold. A review in the order the API server writes
// it (its desiredAPIVersion before its objects) is converted as it is
// read, in a few MB whatever its size (reviewStream). One that lists its
// objects first is held whole until its desiredAPIVersion comes: in its
// bytes and a little more. The bound is what the Deployment leaves that
// one.
const (
	// deployedMemoryLimit is the GOMEMLIMIT config/manager/manager.yaml
	// gives the manager (TestReviewAtTheBoundFitsTheDeployment reads it
	// there).
	deployedMemoryLimit = 200 << 20
	// managerHeap is the heap the rest of the manager holds at the scale
	// target: 33 MB after a collection with 10,000 runs and their Pods
	// cached (docs/benchmarks.md, "4. Memory"), and half as much again.
	managerHeap = 48 << 20
	// MaxReviewBytes bounds a ConversionReview's body: a bigger one gets
	// HTTP 413. A review held whole at the bound, with a tenth more for the
	// collector to work in, and the manager's heap stay under
	// deployedMemoryLimit (TestReviewAtTheBoundFitsTheDeployment). It
	// admits the scale target's LIST of 10,000 Tasks of 10 KB in one
	// review (105 MB through the API server, 127 MB with the benchmarks'
	// metadata).
	MaxReviewBytes = 128 << 20
)

// handler serves ConversionReviews like controller-runtime's handler, with
// the same converters, but converts each object on its own: an object that
// does not decode or convert is passed through as stored, with only its
// apiVersion set to the desired one (see passThrough), instead of failing
// the review and with it a whole LIST, WATCH or garbage collection.
type handler struct {
	scheme   *runtime.Scheme
	registry crconversion.Registry
	log      logr.Logger
	maxBytes int64 // MaxReviewBytes; tests lower it
	// streamAfter is streamAfterBytes; tests lower it, to stream small
	// reviews.
	streamAfter int
}

// NewHandler returns the conversion webhook's handler, which converts with
// the converters registered in registry (webhook builders' WithConverter
// fill the manager's) between the versions scheme knows.
func NewHandler(scheme *runtime.Scheme, registry crconversion.Registry) http.Handler {
	return &handler{scheme: scheme, registry: registry, log: ctrl.Log.WithName("conversion-webhook"),
		maxBytes: MaxReviewBytes, streamAfter: streamAfterBytes}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > h.maxBytes {
		h.refuseTooLarge(w, &http.MaxBytesError{Limit: h.maxBytes})
		return
	}
	body := http.MaxBytesReader(w, r.Body, h.maxBytes)
	review := newConversionReview()
	s := &reviewStream{h: h, ctx: r.Context(), w: w, r: r, body: body, req: review.Request, answer: answer{out: errWriter{w: w}}}
	review.Request.Objects.stream = s
	err := readReview(body, r.ContentLength, review)
	if s.started { // streamed: the answer has begun
		s.end(review, err)
		return
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuseTooLarge(w, err)
		return
	case err != nil:
		h.log.Error(err, "Cannot read a conversion review")
		w.WriteHeader(http.StatusBadRequest)
		return
	case review.request() == nil:
		h.log.Error(nil, "Conversion review without a request")
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.start(review.request())
	s.end(review, nil)
}

// refuseTooLarge answers a review over the bound, for which err says so.
func (h *handler) refuseTooLarge(w http.ResponseWriter, err error) {
	h.log.Error(err, "Refusing a conversion review over the size bound", "limit", h.maxBytes)
	http.Error(w, fmt.Sprintf("conversion review over %d bytes", h.maxBytes), http.StatusRequestEntityTooLarge)
}

// conversionPlan is how one object converts: from its version, through its
// kind's converter, to the desired one.
type conversionPlan struct {
	from, to  schema.GroupVersionKind
	converter crconversion.Converter
}

// plan reads raw's apiVersion and kind and finds its converter and types,
// or says why it has none: what fails a review.
func (h *handler) plan(raw []byte, desired schema.GroupVersion) (conversionPlan, error) {
	header, err := decodeHeader(raw)
	if err != nil {
		return conversionPlan{}, err
	}
	from := schema.FromAPIVersionAndKind(header.APIVersion, header.Kind)
	switch {
	case header.APIVersion == "" || header.Kind == "":
		return conversionPlan{}, fmt.Errorf("object has no apiVersion or no kind (%q, %q)", header.APIVersion, header.Kind)
	case from.Group != desired.Group:
		return conversionPlan{}, fmt.Errorf("%s cannot be converted to %s", from.GroupVersion(), desired)
	case from.Version == desired.Version:
		return conversionPlan{}, fmt.Errorf("%s is already in version %s", from.Kind, desired)
	}
	converter, ok := h.registry.GetConverter(from.GroupKind())
	if !ok {
		return conversionPlan{}, fmt.Errorf("unknown kind %q of group %q", from.Kind, from.Group)
	}
	if !h.scheme.Recognizes(from) {
		return conversionPlan{}, fmt.Errorf("unknown version %q of %s", from.Version, from.Kind)
	}
	to := desired.WithKind(from.Kind)
	if !h.scheme.Recognizes(to) {
		return conversionPlan{}, fmt.Errorf("unknown desired version %q of %s", desired, from.Kind)
	}
	return conversionPlan{from: from, to: to, converter: converter}, nil
}

// convertObject converts one object as planned and returns its JSON. It
// returns an error for what fails the review, and passes through what it
// cannot decode or convert.
func (h *handler) convertObject(ctx context.Context, raw []byte, plan conversionPlan) (jsontext.Value, error) {
	// plan found both types in the scheme, and said so when it did not.
	src, err := h.scheme.New(plan.from)
	if err != nil {
		return nil, err
	}
	dst, err := h.scheme.New(plan.to)
	if err != nil {
		return nil, err
	}
	if err := decodeObject(raw, src); err != nil {
		return h.passThrough(ctx, raw, plan, fmt.Errorf("decoding: %w", err))
	}
	src.GetObjectKind().SetGroupVersionKind(plan.from)
	dst.GetObjectKind().SetGroupVersionKind(plan.to)
	if err := plan.converter.ConvertObject(ctx, src, dst); err != nil {
		return h.passThrough(ctx, raw, plan, fmt.Errorf("converting: %w", err))
	}
	out, err := encodeObject(dst)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", plan.to.Kind, nameOf(raw), err)
	}
	return out, nil
}

// passThrough answers for an object conversion cannot read: as stored, with
// only its apiVersion set to the desired one, so that the review (a LIST, a
// WATCH, garbage collection) goes on. The API server prunes the fields the
// desired version does not know. The object is logged and counted, for an
// operator to repair through the version it is stored in.
func (h *handler) passThrough(ctx context.Context, raw []byte, plan conversionPlan, cause error) (jsontext.Value, error) {
	from, desired := plan.from, plan.to.GroupVersion()
	name := nameOf(raw)
	out, err := withAPIVersion(raw, desired.String())
	if err != nil {
		return nil, fmt.Errorf("%s %s can be neither converted (%w) nor passed through: %w", from.Kind, name, cause, err)
	}
	passthroughTotal.WithLabelValues(from.Kind).Inc()
	reviewLog(ctx).Error(cause, "Passing an object through unconverted",
		"kind", from.Kind, "namespace", name.Namespace, "name", name.Name,
		"apiVersion", from.GroupVersion().String(), "desiredAPIVersion", desired.String())
	return out, nil
}
