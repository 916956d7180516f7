package params

import "strings"

// Substitute replaces each well-formed $(params.NAME) whose NAME is a key of values; everything else is left as is.
//
// It is a single pass: a value that itself holds $(params.y) is inserted
// verbatim, so a run's values can never reach params the Task author did not
// write into the step.
func Substitute(s string, values map[string]string) string {
	if len(values) == 0 || !strings.Contains(s, prefix) {
		return s
	}
	var b strings.Builder
	copied := 0
	for t, ok := next(s, 0); ok; t, ok = next(s, t.end) {
		if t.err != nil {
			continue
		}
		v, found := values[t.name]
		if !found {
			continue
		}
		if copied == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[copied:t.start])
		b.WriteString(v)
		copied = t.end
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}
