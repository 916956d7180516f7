package timerepair

import (
	"strings"
	"time"
)

// layouts are the forms of a date-time that OpenAPI's format check (and so
// an earlier release's CRD) admitted and RFC 3339 refuses, once upper-cased:
// lower-case t and z, a space for T, a zone without a colon, or none (UTC).
var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// canonical returns value as metav1.Time writes it (RFC 3339, UTC, whole
// seconds) when Go's decode of value fails but the instant can still be read,
// and false when value needs no repair or cannot be read at all.
func canonical(value string) (string, bool) {
	if _, err := time.Parse(time.RFC3339, value); err == nil {
		return "", false
	}
	candidate := strings.ToUpper(value)
	if len(candidate) > 10 && candidate[10] == ' ' {
		candidate = candidate[:10] + "T" + candidate[11:]
	}
	for _, layout := range layouts {
		if t, err := time.Parse(layout, candidate); err == nil {
			return t.UTC().Format(time.RFC3339), true
		}
	}
	return "", false
}
