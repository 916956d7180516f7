package conversion

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	conversionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/conversion/metrics"
)

// Path is where the API server sends ConversionReviews (config/crd/patches,
// and envtest's default).
const Path = "/convert"

// MaxReviewBytes bounds a ConversionReview's body. The API server sends a
// whole LIST page, or a whole LIST its watch cache answers, in one review:
// 10,000 Tasks of 10 KB make about 105 MB (docs/benchmarks.md). The bound is
// more than twice that, and keeps a runaway or hostile body from taking the
// manager's memory without limit.
const MaxReviewBytes = 256 << 20

// panicMessage is the Failure a review gets when a converter panics: the
// same as controller-runtime's handler, which tells nothing of the panic.
const panicMessage = "internal error occurred during conversion"

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
	review, err := decodeReview(http.MaxBytesReader(w, r.Body, h.maxBytes))
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

	ctx := log.IntoContext(r.Context(), h.log.WithValues("review", review.Request.UID))
	response := h.convertReview(ctx, review.Request)
	response.UID = review.Request.UID
	review.Response, review.Request = response, nil
	if err := encodeReview(w, review); err != nil {
		h.log.Error(err, "Cannot write a conversion response")
	}
}

// convertReview converts every object of req to its desired version. It
// fails the whole review only where controller-runtime's handler would for
// any object: a kind or version it does not know, or a panic.
func (h *handler) convertReview(ctx context.Context, req *apix.ConversionRequest) (response *apix.ConversionResponse) {
	defer func() {
		if r := recover(); r != nil {
			conversionmetrics.WebhookPanics.WithLabelValues().Inc()
			for _, fn := range utilruntime.PanicHandlers {
				fn(ctx, r)
			}
			response = failure(errors.New(panicMessage))
		}
	}()
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return failure(fmt.Errorf("desired version %q: %w", req.DesiredAPIVersion, err))
	}
	objects := make([]runtime.RawExtension, 0, len(req.Objects))
	for i, raw := range req.Objects {
		converted, err := h.convertObject(ctx, raw.Raw, desired)
		if err != nil {
			log.FromContext(ctx).Error(err, "Failing a conversion review", "object", i)
			return failure(fmt.Errorf("object %d: %w", i, err))
		}
		objects = append(objects, converted)
	}
	return &apix.ConversionResponse{ConvertedObjects: objects, Result: metav1.Status{Status: metav1.StatusSuccess}}
}

// convertObject converts one object to the desired version. It returns an
// error for what fails the review, and passes through what it cannot decode
// or convert.
func (h *handler) convertObject(ctx context.Context, raw []byte, desired schema.GroupVersion) (runtime.RawExtension, error) {
	header, err := decodeHeader(raw)
	if err != nil {
		return runtime.RawExtension{}, err
	}
	from := schema.FromAPIVersionAndKind(header.APIVersion, header.Kind)
	switch {
	case header.APIVersion == "" || header.Kind == "":
		return runtime.RawExtension{}, fmt.Errorf("object has no apiVersion or no kind (%q, %q)", header.APIVersion, header.Kind)
	case from.Group != desired.Group:
		return runtime.RawExtension{}, fmt.Errorf("%s cannot be converted to %s", from.GroupVersion(), desired)
	case from.Version == desired.Version:
		return runtime.RawExtension{}, fmt.Errorf("%s is already in version %s", from.Kind, desired)
	}
	converter, ok := h.registry.GetConverter(from.GroupKind())
	if !ok {
		return runtime.RawExtension{}, fmt.Errorf("unknown kind %q of group %q", from.Kind, from.Group)
	}
	src, err := h.scheme.New(from)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("unknown version %q of %s: %w", from.Version, from.Kind, err)
	}
	to := desired.WithKind(from.Kind)
	dst, err := h.scheme.New(to)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("unknown desired version %q of %s: %w", desired, from.Kind, err)
	}

	if err := decodeObject(raw, src); err != nil {
		return h.passThrough(ctx, raw, from, desired, fmt.Errorf("decoding: %w", err))
	}
	src.GetObjectKind().SetGroupVersionKind(from)
	dst.GetObjectKind().SetGroupVersionKind(to)
	if err := converter.ConvertObject(ctx, src, dst); err != nil {
		return h.passThrough(ctx, raw, from, desired, fmt.Errorf("converting: %w", err))
	}
	return runtime.RawExtension{Object: dst}, nil
}

// passThrough answers for an object conversion cannot read: as stored, with
// only its apiVersion set to the desired one, so that the review (a LIST, a
// WATCH, garbage collection) goes on. The API server prunes the fields the
// desired version does not know. The object is logged and counted, for an
// operator to repair through the version it is stored in.
func (h *handler) passThrough(ctx context.Context, raw []byte, from schema.GroupVersionKind, desired schema.GroupVersion, cause error) (runtime.RawExtension, error) {
	name := nameOf(raw)
	out, err := withAPIVersion(raw, desired.String())
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("%s %s/%s can be neither converted (%w) nor passed through: %w",
			from.Kind, name.Namespace, name.Name, cause, err)
	}
	passthroughTotal.WithLabelValues(from.Kind).Inc()
	log.FromContext(ctx).Error(cause, "Passing an object through unconverted",
		"kind", from.Kind, "namespace", name.Namespace, "name", name.Name,
		"apiVersion", from.GroupVersion().String(), "desiredAPIVersion", desired.String())
	return runtime.RawExtension{Raw: out}, nil
}

// failure is the response that fails a whole review with err's message.
func failure(err error) *apix.ConversionResponse {
	return &apix.ConversionResponse{Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}
}
