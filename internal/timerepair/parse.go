package timerepair

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// layouts are the forms of a date-time that OpenAPI's format check (and so
// an earlier release's CRD) admitted and RFC 3339 refuses, once upper-cased:
// lower-case t and z, a space for T, a zone without a colon, or none (UTC).
// RFC3339Nano, which Go reads leniently, comes first: it reads what the
// CRDs refuse today but Go still reads, as Go reads it.
var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// zoneBeyondRange splits a time whose zone offset Go refuses (an hour past
// 24 or a minute past 60, as in +25:00 or +23:99) into its local time, the
// sign and the offset's hours and minutes. The date-time format admits any
// two digits there, as did the CRDs' pattern until v1beta1.TimePattern.
var zoneBeyondRange = regexp.MustCompile(`^(.+)([+-])([0-9]{2}):?([0-9]{2})$`)

// timePattern is what the CRDs admit of a time today (v1beta1.TimePattern).
var timePattern = regexp.MustCompile(v1beta1.TimePattern)

// canonical returns value as metav1.Time writes it (RFC 3339, UTC, whole
// seconds) when the CRDs refuse value today but its instant can be read,
// and false when value needs no repair or names no instant.
//
// Most such values Go's decode refuses, so they break every typed read of
// TaskRuns. A few it reads (a zone offset of +24:00 or with a minute of 60,
// a comma before the fraction), yet one in status.attempts would have the
// next write that changes that list refused (the controller's, when an
// attempt fails): the API server judges every item of a listType=atomic
// list again when the list changes.
//
// An offset Go refuses names an instant all the same, the local time less
// the offset, as Go reads +24:00. A date or time of day out of range (Feb
// 30, 24:00:00) names none; it is left, as is anything that is no time at
// all.
func canonical(value string) (string, bool) {
	if timePattern.MatchString(value) {
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
	if m := zoneBeyondRange.FindStringSubmatch(candidate); m != nil {
		if local, err := time.Parse("2006-01-02T15:04:05.999999999", m[1]); err == nil {
			hours, _ := strconv.Atoi(m[3])
			minutes, _ := strconv.Atoi(m[4])
			offset := time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute
			if m[2] == "-" {
				offset = -offset
			}
			return local.Add(-offset).UTC().Format(time.RFC3339), true
		}
	}
	return "", false
}
