package conversion

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// MaxReviewBytes bounds a ConversionReview's body. The API server sends a
// whole LIST page, or a whole LIST its watch cache answers, in one review:
// 10,000 Tasks of 10 KB make about 105 MB (docs/benchmarks.md). The bound is
// more than twice that, and keeps a runaway or hostile body from taking the
// manager's memory without limit.
const MaxReviewBytes = 256 << 20

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
}

// NewHandler returns the conversion webhook's handler, which converts with
// the converters registered in registry (webhook builders' WithConverter
// fill the manager's) between the versions scheme knows.
func NewHandler(scheme *runtime.Scheme, registry crconversion.Registry) http.Handler {
	return &handler{scheme: scheme, registry: registry, log: ctrl.Log.WithName("conversion-webhook"), maxBytes: MaxReviewBytes}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review, err := decodeReview(http.MaxBytesReader(w, r.Body, h.maxBytes), min(r.ContentLength, h.maxBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.log.Error(err, "Refusing a conversion review over the size bound", "limit", h.maxBytes)
		http.Error(w, fmt.Sprintf("conversion review over %d bytes", h.maxBytes), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		h.log.Error(err, "Cannot read a conversion review")
		w.WriteHeader(http.StatusBadRequest)
		return
	case review.Request == nil:
		h.log.Error(nil, "Conversion review without a request")
		w.WriteHeader(http.StatusBadRequest)
		return
	}

	ctx := withReview(r.Context(), h.log, review.Request.UID)
	response := h.convertReview(ctx, review.Request)
	response.UID = review.Request.UID
	review.Response, review.Request = response, nil
	if err := encodeReview(w, review); err != nil {
		h.log.Error(err, "Cannot write a conversion response")
	}
}

// convertReview converts every object of req to its desired version. It
// fails the whole review only where controller-runtime's handler would for
// any object: a kind or version it does not know, or a panic. Those it
// finds first, by reading each object's apiVersion and kind, before it
// converts any object.
func (h *handler) convertReview(ctx context.Context, req *conversionRequest) *conversionResponse {
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return failure(fmt.Errorf("desired version %q: %w", req.DesiredAPIVersion, err))
	}
	plans := make([]conversionPlan, len(req.Objects))
	for i, raw := range req.Objects {
		if plans[i], err = h.plan(raw, desired); err != nil {
			reviewLog(ctx).Error(err, "Failing a conversion review", "object", i)
			return failure(fmt.Errorf("object %d: %w", i, err))
		}
	}
	objects, err := convertAll(ctx, h, req.Objects, plans)
	if err != nil {
		return failure(err)
	}
	return &conversionResponse{ConvertedObjects: objects, Result: metav1.Status{Status: metav1.StatusSuccess}}
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

// failure is the response that fails a whole review with err's message.
func failure(err error) *conversionResponse {
	return &conversionResponse{Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}
}
