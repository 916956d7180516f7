package conversion

import (
	"context"
	"maps"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationConversionData is the annotation on a spoke's object (v1alpha1,
// v1beta1) that holds, as JSON, the fields of the hub (v1) and of v1beta1
// that the spoke cannot express, so that converting back loses nothing.
const AnnotationConversionData = "minitask.dev/conversion-data"

// AnnotationConversionDataOmitted replaces AnnotationConversionData on a
// v1alpha1 object whose annotations, stash included, would pass the API
// server's limit (MaxAnnotationsBytes): conversion must never return invalid
// metadata, so it leaves the stash out and says so. The validating webhook
// refuses v1alpha1 writes to such an object, which would lose what the stash
// held.
const AnnotationConversionDataOmitted = "minitask.dev/conversion-data-omitted"

// MaxAnnotationsBytes is the API server's limit on an object's annotations,
// keys and values together (apimachinery's TotalAnnotationSizeLimitB, 256 KiB).
const MaxAnnotationsBytes = apivalidation.TotalAnnotationSizeLimitB

// stashOptions write the annotation as encoding/json does (json/v1's
// options: the same meaning in less time, and the bytes of a stash those
// release 2 wrote), and are what stashReadOptions read it with. They have
// no unmarshaler (timeReading): the stash's times are read by their own
// method (stash_read.go), and with an unmarshaler, the codec would look up
// every value's type among them.
var stashOptions = jsonv1.DefaultOptionsV1()

// stashReadOptions read the annotation: stashOptions without encoding/json's
// check of the whole annotation's syntax before decoding it, a second pass
// over it. An annotation that does not parse is ignored either way, since
// what was decoded before the error is dropped with it (restoreLostFields).
// Writing keeps the check's other half, encoding/json's tolerance of a
// struct's tag errors, so that a stash is never lost to one.
var stashReadOptions = jsonv2.JoinOptions(stashOptions, jsonv1.ReportErrorsWithLegacySemantics(false))

// conversionData is the annotation's JSON, read and written with
// stashOptions. Each key names the version whose fields it holds, at that
// version's own paths (spec.params, ...), so that a later release can still
// read what an earlier one wrote:
//
//   - v1beta1 (releases 2 to 4, and since): what v1alpha1 cannot express of
//     v1beta1, on v1alpha1 objects only. Release 4 and before read this key
//     alone, so v1alpha1 keeps everything v1beta1 expresses here.
//   - v1 (release 5 and since): what neither spoke expresses of v1 (param
//     types, timeouts.pending), on objects of either spoke.
//
// B is nothing (struct{}) on v1beta1 objects.
type conversionData[B, V any] struct {
	V1beta1 B `json:"v1beta1,omitzero"`
	V1      V `json:"v1,omitzero"`
}

// emptyConversionData is what conversionData marshals to when nothing is lost.
const emptyConversionData = "{}"

// encodeStash returns the annotation value that records lost, or "" when
// nothing is lost. lost must hold nil, not empty, slices, so that when
// nothing is lost it marshals to {}.
func encodeStash[T any](lost T) (string, error) {
	data, err := jsonv2.Marshal(lost, stashOptions)
	if err != nil || string(data) == emptyConversionData {
		return "", err
	}
	return string(data), nil
}

// stashLostFields records lost in meta's conversion annotation, or removes
// the annotation when lost is empty. When the annotations would then pass
// MaxAnnotationsBytes, it leaves the stash out and sets
// AnnotationConversionDataOmitted instead. meta's annotations map may be
// shared with the source object, so it is copied before it changes.
func stashLostFields[T any](ctx context.Context, meta *metav1.ObjectMeta, lost T) {
	data, err := encodeStash(lost)
	if err != nil {
		// Our own types always marshal; should that ever change, the object
		// still converts, only without what the spoke cannot hold.
		reviewLog(ctx).Error(err, "Cannot record fields the spoke cannot express",
			"namespace", meta.Namespace, "name", meta.Name)
		setConversionAnnotations(meta, "", false)
		return
	}
	if data == "" {
		setConversionAnnotations(meta, "", false)
		return
	}
	if size := annotationsSizeWith(meta.Annotations, AnnotationConversionData, data); size > MaxAnnotationsBytes {
		reviewLog(ctx).V(1).Info("Omitting the conversion annotation: the annotations would be too long",
			"namespace", meta.Namespace, "name", meta.Name, "bytes", size, "limit", MaxAnnotationsBytes)
		// Even the marker may not fit, if the object's own annotations all
		// but fill the limit; the stash guard then goes by size alone
		// (MarkerWouldNotFit).
		fits := annotationsSizeWith(meta.Annotations, AnnotationConversionDataOmitted, "true") <= MaxAnnotationsBytes
		setConversionAnnotations(meta, "", fits)
		return
	}
	setConversionAnnotations(meta, data, false)
}

// MarkerWouldNotFit reports whether annotations, an object's v1alpha1 form's,
// carry no stash and leave no room for AnnotationConversionDataOmitted: if
// its conversion omitted a stash, it could not say so, and only this size
// tells that the object may hold what a v1alpha1 write would lose.
func MarkerWouldNotFit(annotations map[string]string) bool {
	return annotations[AnnotationConversionData] == "" &&
		annotationsSizeWith(annotations, AnnotationConversionDataOmitted, "true") > MaxAnnotationsBytes
}

// annotationsSizeWith is the size the API server counts for annotations
// with key set to value and without the other conversion annotation: the
// sum of every key's and value's length in bytes.
func annotationsSizeWith(annotations map[string]string, key, value string) int {
	size := len(key) + len(value)
	for k, v := range annotations {
		if k != AnnotationConversionData && k != AnnotationConversionDataOmitted {
			size += len(k) + len(v)
		}
	}
	return size
}

// setConversionAnnotations makes meta carry the stash data (none when
// empty) and the omission marker when omitted, and neither conversion
// annotation otherwise. It copies meta's annotations only if they change,
// since the map may be shared with the source object.
func setConversionAnnotations(meta *metav1.ObjectMeta, data string, omitted bool) {
	stash, hasStash := meta.Annotations[AnnotationConversionData]
	_, hasMarker := meta.Annotations[AnnotationConversionDataOmitted]
	if hasStash == (data != "") && stash == data && hasMarker == omitted {
		return
	}
	if data == "" && !omitted && onlyConversionAnnotations(meta.Annotations) {
		// What a v1alpha1 object with no annotations of its own converts to:
		// no map to copy.
		meta.Annotations = nil
		return
	}
	annotations := make(map[string]string, len(meta.Annotations)+1)
	maps.Copy(annotations, meta.Annotations)
	delete(annotations, AnnotationConversionData)
	delete(annotations, AnnotationConversionDataOmitted)
	if data != "" {
		annotations[AnnotationConversionData] = data
	}
	if omitted {
		annotations[AnnotationConversionDataOmitted] = "true"
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	meta.Annotations = annotations
}

// onlyConversionAnnotations reports whether annotations hold no key but
// the conversion annotations.
func onlyConversionAnnotations(annotations map[string]string) bool {
	for k := range annotations {
		if k != AnnotationConversionData && k != AnnotationConversionDataOmitted {
			return false
		}
	}
	return true
}

// restoreLostFields reads meta's conversion annotation into lost and removes
// both conversion annotations. An annotation that does not parse is ignored:
// conversion must not fail, and the fields v1alpha1 expresses are converted
// regardless.
func restoreLostFields[T any](ctx context.Context, meta *metav1.ObjectMeta, lost *T) {
	value, ok := meta.Annotations[AnnotationConversionData]
	setConversionAnnotations(meta, "", false)
	if !ok {
		return
	}
	var data T
	if err := decodeStash(value, &data); err != nil {
		reviewLog(ctx).V(1).Info("Ignoring unparsable conversion annotation",
			"namespace", meta.Namespace, "name", meta.Name,
			"annotation", AnnotationConversionData, "error", err.Error())
		return
	}
	*lost = data
}

// decodeStash reads a conversion annotation's value into data, as every
// converter reads it (restoreLostFields) and as the handler's benchmark
// floors read it too, so that they do the same JSON work.
func decodeStash(value string, data any) error {
	// Read the string's own bytes, which the decoder only reads: a copy, or
	// a reader's buffer, would be as long.
	return jsonv2.Unmarshal(stringBytes(value), data, stashReadOptions)
}

// stringBytes is s's bytes, not copied: for reading only.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s)) //nolint:gosec // only read (jsonv2.Unmarshal does not write its input)
}

// nilIfEmpty returns nil for an empty slice, which JSON cannot tell from an
// absent one, so that an empty list is never stashed.
func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}
