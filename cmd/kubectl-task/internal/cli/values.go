package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file shows the values users write (env values, params and their
// defaults, results) in a table's cell: on one line, and short. A param's
// value may be 64 KiB and a result's 4 KiB, over many lines; shown raw,
// either would break the table or push every other row aside.

// maxValueDisplay is how many characters of a param's or a result's value
// describe shows.
const maxValueDisplay = 100

// Where a value cut short is shown whole, for shortValue.
const (
	wholeInRun  = "kubectl get tr -o yaml"
	wholeInTask = "kubectl get task -o yaml"
)

// displayValue shows a value on one line: as it is when it reads plainly,
// quoted when it is empty, has spaces at its ends, or holds characters
// (newlines, tabs) that would break the table.
func displayValue(v string) string {
	if v == "" || strings.TrimSpace(v) != v || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// shortValue shows a value as displayValue does, cut at maxValueDisplay
// characters, with the whole value's size and wholeIn, the command that
// shows it whole.
func shortValue(v, wholeIn string) string {
	if utf8.RuneCountInString(v) <= maxValueDisplay {
		return displayValue(v)
	}
	cut := string([]rune(v)[:maxValueDisplay])
	return fmt.Sprintf("%s... (%d bytes in all; %s shows it whole)", displayValue(cut), len(v), wholeIn)
}
