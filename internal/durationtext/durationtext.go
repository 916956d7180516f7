// Package durationtext reads and writes a Go duration as JSON text and keeps
// the text it was written in, for the Duration types of the API versions
// (apis/v1beta1, apis/v1). Each version keeps its own type, with its own
// markers; what they share is how the text is read, written and kept.
//
// It imports only the standard library: the API packages hold types and
// markers, and import nothing else of this module.
package durationtext

import (
	"encoding/json"
	"fmt"
	"time"
)

// String is text when it still says d, else Go's canonical form of d
// (1h30m0s): a duration decoded from 10m and not changed since is 10m.
func String(d time.Duration, text string) string {
	if text != "" {
		if parsed, err := time.ParseDuration(text); err == nil && parsed == d {
			return text
		}
	}
	return d.String()
}

// Decode reads data, a JSON string holding a Go duration, and returns its
// value and its text. JSON null returns an empty text and no error: a
// Duration decoded from it stays as it was, as encoding/json's convention
// has it.
func Decode(data []byte) (time.Duration, string, error) {
	if string(data) == "null" {
		return 0, "", nil
	}
	text, plain := plainJSONString(data)
	if !plain {
		if err := json.Unmarshal(data, &text); err != nil {
			return 0, "", fmt.Errorf("a duration must be a string such as 1h30m: %w", err)
		}
	}
	parsed, err := time.ParseDuration(text)
	if err != nil {
		return 0, "", err
	}
	return parsed, text, nil
}

// Encode writes text as a JSON string, as encoding/json would.
func Encode(text string) ([]byte, error) {
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
