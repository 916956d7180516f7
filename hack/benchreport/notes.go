package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Hand-written notes live in docs/benchmarks.md itself, one block per
// section, each opened by a notesMark line naming the section's id and
// running to the next heading. They sit where people read them and are
// edited there, with no second file to keep in step; every render takes
// them from the report it replaces (-notes) and puts each back under its
// section, in the order of summaries, whatever its numbers became.
const notesMarkPrefix, notesMarkSuffix = "<!-- notes: ", " (written by hand; make bench keeps it) -->"

func notesMark(id string) string { return notesMarkPrefix + id + notesMarkSuffix }

// notesID returns the id a notesMark line names.
func notesID(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, notesMarkPrefix)
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(strings.TrimSuffix(rest, "-->"), " ")
	return strings.TrimSpace(id), id != ""
}

// keptNotes reads each section's notes from the report at path, by id;
// none when there is no report yet. Notes under an id no section has are an
// error, so that renaming a section never drops what people wrote.
func keptNotes(path string, ids []string) (map[string]string, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	notes := parseNotes(string(old))
	for id := range notes {
		if !slices.Contains(ids, id) {
			return nil, fmt.Errorf("%s: notes for %q, which no section has: move them to a section's %q block",
				path, id, notesMark("<id>"))
		}
	}
	return notes, nil
}

func parseNotes(report string) map[string]string {
	notes := map[string]string{}
	var id string
	var lines []string
	flush := func() {
		if id != "" {
			notes[id] = strings.Trim(strings.Join(lines, "\n"), "\n")
		}
		id, lines = "", nil
	}
	for _, line := range strings.Split(report, "\n") {
		if next, ok := notesID(line); ok {
			flush()
			id = next
			continue
		}
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## ") {
			flush() // a generated heading; notes may have their own ### headings
			continue
		}
		if id != "" {
			lines = append(lines, line)
		}
	}
	flush()
	return notes
}
