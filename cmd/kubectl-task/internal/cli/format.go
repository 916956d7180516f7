package cli

import (
	"io"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// none stands for a time or duration that does not exist (yet).
const none = "---"

// ago says how long before now t was, in kubectl's AGE style: "5m ago".
func ago(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return none
	}
	return since(t.Time, now) + " ago"
}

// since is the time from t to now, in kubectl's AGE style: "5m".
func since(t, now time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

// between is how long from start to end, or none if either is missing.
func between(start, end *metav1.Time) string {
	if start == nil || end == nil || start.IsZero() || end.IsZero() {
		return none
	}
	return since(start.Time, end.Time)
}

// flagDuration is d as one writes it in a flag or a spec: 1h and 10m rather
// than Go's 1h0m0s and 10m0s.
func flagDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// newTabWriter aligns columns as kubectl's tables do.
func newTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
}
