package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

// TestFlagTablesAreTheManagers holds the docs' tables of the manager's flags
// for runs (docs/install.md, docs/lifecycle.md) to the manager: each flag
// they name is one it has, with the default they give, so that a flag added
// or changed is said where an installer reads it.
func TestFlagTablesAreTheManagers(t *testing.T) {
	usage := string(managerHelp(t))
	for _, doc := range []string{"docs/install.md", "docs/lifecycle.md"} {
		for _, row := range markdown.Table(t, doc, "| flag | default | |") {
			name := strings.TrimPrefix(row[0], "--")
			flag := regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `( \S+)?\n\s+(.*)$`).FindStringSubmatch(usage)
			if flag == nil {
				t.Errorf("%s names --%s, which the manager's --help does not list", doc, name)
				continue
			}
			got := "" // the flag's zero value, which flag prints no default for
			if m := regexp.MustCompile(`\(default "?([^")]*)"?\)$`).FindStringSubmatch(flag[2]); m != nil {
				got = m[1]
			}
			want := strings.Trim(strings.Fields(row[1])[0], "`") // "`0` (keep)": 0
			if !sameDefault(want, got) {
				t.Errorf("%s gives --%s the default %q; the manager's is %q", doc, name, want, got)
			}
		}
	}
}

// sameDefault reports whether a doc's default and the manager's, as --help
// prints it ("" for a zero value), are the same: as durations where the doc
// gives one ("2m" and "2m0s"), else as text.
func sameDefault(doc, help string) bool {
	d, err := time.ParseDuration(doc)
	if err != nil {
		return doc == help
	}
	if help == "" {
		return d == 0
	}
	h, err := time.ParseDuration(help)
	return err == nil && h == d
}
