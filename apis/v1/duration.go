package v1

import (
	"encoding/json"
	"fmt"
	"time"
)

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
func (d Duration) String() string {
	if d.text != "" {
		if parsed, err := time.ParseDuration(d.text); err == nil && parsed == d.Duration {
			return d.text
		}
	}
	return d.Duration.String()
}

// Equal reports whether d and other are the same length of time, however
// each is written. go-cmp uses it, so that tests compare values.
func (d Duration) Equal(other Duration) bool { return d.Duration == other.Duration }

// UnmarshalJSON reads a Go duration string and keeps its text. JSON null
// leaves d as it is, as encoding/json's convention has it.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	text, plain := plainJSONString(data)
	if !plain {
		if err := json.Unmarshal(data, &text); err != nil {
			return fmt.Errorf("a duration must be a string such as 1h30m: %w", err)
		}
	}
	parsed, err := time.ParseDuration(text)
	if err != nil {
		return err
	}
	d.Duration, d.text = parsed, text
	return nil
}

// MarshalJSON writes String().
func (d Duration) MarshalJSON() ([]byte, error) {
	text := d.String()
	if isPlain(text) {
		return append(append(append(make([]byte, 0, len(text)+2), '"'), text...), '"'), nil
	}
	return json.Marshal(text)
}

// plainJSONString returns what data, a JSON string, says when it is plain
// (see isPlain) and so needs no unescaping. Every duration but those in µs
// is plain; the others go through encoding/json, which costs ten times as
// much (a TaskRun's timeout is converted on every read of a stored
// v1alpha1 object).
func plainJSONString(data []byte) (string, bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' || !isPlain(data[1:len(data)-1]) {
		return "", false
	}
	return string(data[1 : len(data)-1]), true
}

// isPlain reports whether s is printable ASCII that encoding/json writes
// unchanged between quotes: no quote, backslash or HTML character to escape.
func isPlain[S ~string | ~[]byte](s S) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// ToUnstructured implements apimachinery's value.UnstructuredConverter, as
// metav1.Duration does, so that unstructured and server-side apply
// conversions see the same string as JSON.
func (d Duration) ToUnstructured() any { return d.String() }
