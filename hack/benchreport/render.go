package main

import (
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
)

// floorModes are the floors a conversion result is held to: decoding and
// encoding the same review with the handler's codec, and with encoding/json.
var floorModes = []string{"floor", "floor-encoding-json"}

// deriveRatios adds unitRatioToFloor to every result that has a floor
// sibling: the one number the in-process conversion goal is about, against
// the faster of its floors, that is the higher of the ratios to each.
//
// Where the benchmark also measured the handler and the codec's floor turn
// about (mode "paired", its "ratio" the median of its runs), that is the
// ratio to the codec's floor: the two sides of a ratio measured apart, on a
// machine whose speed drifts, drift apart too.
func deriveRatios(results []result) {
	for i, r := range results {
		if !r.hasMode("convert") {
			continue
		}
		ratio, found := 0.0, false
		for _, mode := range floorModes {
			floor, ok := sibling(results, r, mode)
			ns := floor.values["ns/op"]
			if !ok || ns <= 0 {
				continue
			}
			toFloor := r.values["ns/op"] / ns
			if paired, ok := sibling(results, r, pairedMode); ok && mode == pairedFloorMode && paired.values["ratio"] > 0 {
				toFloor = paired.values["ratio"]
			}
			ratio, found = max(ratio, toFloor), true
		}
		if found {
			results[i].values[unitRatioToFloor] = ratio
		}
	}
}

// pairedMode is the result of the handler and pairedFloorMode's floor
// measured turn about, on the same review.
const pairedMode, pairedFloorMode = "paired", "floor"

// sibling finds the result of r's benchmark with r's keys and the given mode.
func sibling(results []result, r result, mode string) (result, bool) {
	for _, s := range results {
		if s.base == r.base && maps.Equal(s.keys, r.keys) && s.hasMode(mode) {
			return s, true
		}
	}
	return result{}, false
}

func (g goal) appliesTo(r result) bool {
	return r.matches(g.base, g.keys) && (g.mode == "" || r.hasMode(g.mode))
}

func (g goal) met(v float64) bool {
	switch {
	case g.atLeast && g.strict:
		return v > g.limit
	case g.atLeast:
		return v >= g.limit
	case g.strict:
		return v < g.limit
	default:
		return v <= g.limit
	}
}

// worse reports whether v is further from meeting g than worst.
func (g goal) worse(v, worst float64) bool {
	if g.atLeast {
		return v < worst
	}
	return v > worst
}

func (g goal) bound() string {
	op := "≤"
	switch {
	case g.atLeast && g.strict:
		op = ">"
	case g.atLeast:
		op = "≥"
	case g.strict:
		op = "<"
	}
	return op + " " + strconv.FormatFloat(g.limit, 'f', -1, 64)
}

// verdict is the goal column of one value: empty when no goal covers it.
func verdict(r result, unit string, v float64) string {
	var out []string
	for _, g := range goals {
		if g.unit != unit || !g.appliesTo(r) {
			continue
		}
		word := "**missed**"
		if g.met(v) {
			word = "met"
		}
		out = append(out, fmt.Sprintf("%s %s: %s", unitLabel(unit), g.bound(), word))
	}
	return strings.Join(out, "; ")
}

func unitLabel(unit string) string {
	if unit == unitRatioToFloor {
		return "ratio"
	}
	return unit
}

// writeGoals writes the goal table: every goal, its bound, the figure of
// this run that decides it (the worst of its results), met or missed; a
// goal without results says so rather than dropping out.
func writeGoals(w io.Writer, results []result) {
	fmt.Fprintln(w, "| goal | bound | measured (worst case) | |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, g := range goals {
		worst, where, found := 0.0, "", false
		for _, r := range results {
			v, ok := r.values[g.unit]
			if !ok || !g.appliesTo(r) {
				continue
			}
			if !found || g.worse(v, worst) {
				worst, where, found = v, describeKeys(r), true
			}
		}
		switch {
		case !found:
			fmt.Fprintf(w, "| %s | %s %s | not measured | **not measured** |\n", g.what, unitLabel(g.unit), g.bound())
		default:
			word := "**missed**"
			if g.met(worst) {
				word = "met"
			}
			if where != "" {
				where = " (" + where + ")"
			}
			fmt.Fprintf(w, "| %s | %s %s | %s%s | %s |\n", g.what, unitLabel(g.unit), g.bound(), decimal(worst), where, word)
		}
	}
}

func describeKeys(r result) string {
	var parts []string
	for _, k := range []string{"kind", "to", "objects", "step", "steps"} {
		if v, ok := r.keys[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func writeSection(w io.Writer, s section, results []result) {
	fmt.Fprintf(w, "## %s\n\n", s.title)
	if s.about != "" {
		fmt.Fprintf(w, "%s\n\n", s.about)
	}
	var rows []result
	for _, r := range results {
		if r.base == s.base && (s.mode == "" || r.hasMode(s.mode)) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "Not measured: no Benchmark%s results in this run.\n\n", s.base)
		return
	}
	if len(s.rowKeys) == 0 {
		writeMeasures(w, s, rows[0], results)
		return
	}
	headers := append(append([]string{}, s.rowKeys...), columnHeaders(s.columns)...)
	writeRow(w, append(headers, "goal"))
	writeRow(w, separator(len(headers)+1))
	for _, r := range rows {
		var cells []string
		for _, k := range s.rowKeys {
			cells = append(cells, r.keys[k])
		}
		var verdicts []string
		for _, c := range s.columns {
			cell, v, ok := cellValue(results, r, c)
			cells = append(cells, cell)
			if ok && c.mode == "" {
				if vd := verdict(r, c.unit, v); vd != "" {
					verdicts = append(verdicts, vd)
				}
			}
		}
		writeRow(w, append(cells, strings.Join(verdicts, "; ")))
	}
	fmt.Fprintln(w)
}

// writeMeasures writes a one-result section as a measure-per-row table.
func writeMeasures(w io.Writer, s section, r result, results []result) {
	writeRow(w, []string{"measure", "value", "goal"})
	writeRow(w, separator(3))
	for _, c := range s.columns {
		cell, v, ok := cellValue(results, r, c)
		vd := ""
		if ok {
			vd = verdict(r, c.unit, v)
		}
		writeRow(w, []string{c.header, cell, vd})
	}
	fmt.Fprintln(w)
}

func cellValue(results []result, r result, c column) (string, float64, bool) {
	if c.mode != "" {
		var ok bool
		if r, ok = sibling(results, r, c.mode); !ok {
			return "—", 0, false
		}
	}
	v, ok := r.values[c.unit]
	if !ok {
		return "—", 0, false
	}
	return c.format(v), v, true
}

func columnHeaders(cs []column) []string {
	var hs []string
	for _, c := range cs {
		hs = append(hs, c.header)
	}
	return hs
}

// separator is the line under a table's header of n columns.
func separator(n int) []string { return strings.Split(strings.Repeat("---,", n), ",")[:n] }

func writeRow(w io.Writer, cells []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}
