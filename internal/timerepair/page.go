package timerepair

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// storedRun is what the repair needs of a stored TaskRun: who it is and the
// times in its status, each as the string stored. Decoding a LIST page into
// it skips every other field (spec, managed fields, messages, results)
// without allocating it, where an unstructured run held them all as maps.
type storedRun struct {
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Status storedStatus `json:"status"`
}

// storedStatus holds the paths of every metav1.Time in v1beta1's
// TaskRunStatus: startTime, completionTime, conditions[].lastTransitionTime,
// steps[].startedAt and finishedAt, attempts[].startTime and completionTime.
type storedStatus struct {
	StartTime      storedTime `json:"startTime"`
	CompletionTime storedTime `json:"completionTime"`
	Conditions     []struct {
		LastTransitionTime storedTime `json:"lastTransitionTime"`
	} `json:"conditions"`
	Steps []struct {
		StartedAt  storedTime `json:"startedAt"`
		FinishedAt storedTime `json:"finishedAt"`
	} `json:"steps"`
	Attempts []struct {
		StartTime      storedTime `json:"startTime"`
		CompletionTime storedTime `json:"completionTime"`
	} `json:"attempts"`
}

// storedTime is a time as stored: a string, or absent. A value of another
// JSON type (null, a number) is no time to repair and is ignored, not an
// error, so that one odd field cannot stop the repair of the rest.
type storedTime struct {
	value string
	isSet bool
}

// UnmarshalJSON keeps data when it is a JSON string.
func (t *storedTime) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '"' {
		return nil
	}
	// A time has no escapes: take it as it is, sparing json.Unmarshal's
	// allocations for each of the ten or so times of every run.
	if inner := data[1 : len(data)-1]; !bytes.ContainsRune(inner, '\\') {
		t.value, t.isSet = string(inner), true
		return nil
	}
	if err := json.Unmarshal(data, &t.value); err != nil {
		return err
	}
	t.isSet = true
	return nil
}

// decodePage reads a LIST response of TaskRuns from body one item at a time,
// calling visit with each in the order listed, and returns the page's
// continue token. Only one item's bytes are held at once, never the page's.
//
// A field of an unexpected JSON type (a list that is an object, an item that
// is no object) leaves that field empty and the rest of the item decoded, as
// the map-based reading skipped what was not a map or a string.
func decodePage(body io.Reader, visit func(*storedRun) error) (string, error) {
	dec := json.NewDecoder(body)
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	var continueToken string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("reading a key of the list: %w", err)
		}
		switch key {
		case "items":
			if err := decodeItems(dec, visit); err != nil {
				return "", err
			}
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&meta); err != nil {
				return "", fmt.Errorf("reading the list's metadata: %w", err)
			}
			continueToken = meta.Continue
		default: // apiVersion, kind: small, and not needed
			var skipped json.RawMessage
			if err := dec.Decode(&skipped); err != nil {
				return "", fmt.Errorf("reading the list's %v: %w", key, err)
			}
		}
	}
	return continueToken, expectDelim(dec, '}')
}

// decodeItems reads the list's items array (or null) and visits each item.
func decodeItems(dec *json.Decoder, visit func(*storedRun) error) error {
	start, err := dec.Token()
	if err != nil {
		return fmt.Errorf("reading the list's items: %w", err)
	}
	if start == nil {
		return nil
	}
	if start != json.Delim('[') {
		return fmt.Errorf("reading the list's items: got %v, want an array", start)
	}
	for index := 0; dec.More(); index++ {
		var run storedRun
		var typeErr *json.UnmarshalTypeError
		if err := dec.Decode(&run); err != nil && !errors.As(err, &typeErr) {
			return fmt.Errorf("reading item %d of the list: %w", index, err)
		}
		if err := visit(&run); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

// expectDelim reads the next token and checks that it is want.
func expectDelim(dec *json.Decoder, want json.Delim) error {
	got, err := dec.Token()
	if err != nil {
		return fmt.Errorf("reading the list: %w", err)
	}
	if got != want {
		return fmt.Errorf("reading the list: got %v, want %v", got, want)
	}
	return nil
}
