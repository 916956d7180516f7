// Package markdown reads the tables of the repository's Markdown docs, so that
// tests can hold a doc's table and the code it describes equal.
package markdown

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Table returns the cells of the rows of the first table in the file at path
// whose header line starts with header, e.g. "| status | reason |". Cells are
// trimmed of spaces and of the backquotes of inline code. It fails the test
// if there is no such table, if it has no rows, or if a row has not as many
// cells as the header.
func Table(t testing.TB, path, header string) [][]string {
	t.Helper()
	rows := RawTable(t, path, header)
	for _, row := range rows {
		for i, cell := range row {
			row[i] = strings.Trim(cell, "`")
		}
	}
	return rows
}

// RawTable is Table with each cell as written, trimmed of spaces only, for
// a test that reads a cell's inline code (CodeSpans).
func RawTable(t testing.TB, path, header string) [][]string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	lines := strings.Split(string(doc), "\n")
	start := -1
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), header) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("%s has no table headed %q", path, header)
	}
	columns := len(cells(lines[start]))
	var rows [][]string
	for _, line := range lines[start+2:] { // past the header and its |---| line
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		row := cells(line)
		if len(row) != columns {
			t.Fatalf("%s: table row %q has %d cells, want %d as its header", path, line, len(row), columns)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: the table headed %q has no rows", path, header)
	}
	return rows
}

// cells splits a table line into its cells, trimmed of spaces.
func cells(line string) []string {
	var out []string
	for _, cell := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
		out = append(out, strings.TrimSpace(cell))
	}
	return out
}

// CodeSpans returns the text of each inline code span in text (`like
// this`), in order.
func CodeSpans(text string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// codeSpan is an inline code span of one backquote on each side.
var codeSpan = regexp.MustCompile("`([^`]+)`")
