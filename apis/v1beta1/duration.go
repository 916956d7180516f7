package v1beta1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/minitask-dev/minitask/internal/durationtext"
)

// apimachinery's equality.Semantic, with which the controller tells
// whether a status changed and the webhooks whether a spec did, panics on a
// struct with an unexported field, as Duration's text is: it compares
// Durations by value, as Equal does.
func init() {
	utilruntime.Must(equality.Semantic.AddFunc(func(a, b Duration) bool { return a.Equal(b) }))
}

// Duration is a Go duration (spec.timeout) that keeps the text it was
// decoded from. metav1.Duration re-encodes 10m as 10m0s; every trip through
// conversion would then rewrite a user's manifest, and a later apply of that
// manifest would see a change that is none. Duration encodes the text it was
// given for as long as the value is the one that text says, and the value's
// canonical form otherwise (a Duration set from Go, or changed since).
//
// Compare Durations by value (Equal), never by text: 10m and 10m0s are the
// same timeout.
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:Pattern=`^-?([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
type Duration struct {
	// Duration is the value; Go code reads and sets it as it would
	// metav1.Duration's.
	time.Duration `json:"-"`

	// text is what the Duration was decoded from, if anything.
	text string `json:"-"`
}

// NewDuration returns d as a Duration, written in Go's canonical form.
func NewDuration(d time.Duration) *Duration { return &Duration{Duration: d} }

// String is the duration as written, when it was decoded and still holds
// the value it was decoded with, else Go's canonical form (1h30m0s).
func (d Duration) String() string { return durationtext.String(d.Duration, d.text) }

// Equal reports whether d and other are the same length of time, however
// each is written. go-cmp uses it, so that tests compare values.
func (d Duration) Equal(other Duration) bool { return d.Duration == other.Duration }

// UnmarshalJSON reads a Go duration string and keeps its text. JSON null
// leaves d as it is, as encoding/json's convention has it.
func (d *Duration) UnmarshalJSON(data []byte) error {
	parsed, text, err := durationtext.Decode(data)
	if err == nil && text != "" { // text is empty for null only
		d.Duration, d.text = parsed, text
	}
	return err
}

// MarshalJSON writes String().
func (d Duration) MarshalJSON() ([]byte, error) { return durationtext.Encode(d.String()) }

// ToUnstructured implements apimachinery's value.UnstructuredConverter, as
// metav1.Duration does, so that unstructured and server-side apply
// conversions see the same string as JSON.
func (d Duration) ToUnstructured() any { return d.String() }
