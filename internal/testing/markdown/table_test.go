package markdown

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTable(t *testing.T) {
	doc := "# Doc\n\n| phase | status |\n|---|---|\n| `\"\"` | (no condition) |\n| Running | Unknown |\n\nAfter.\n| phase | other |\n"
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{`""`, "(no condition)"}, {"Running", "Unknown"}}
	if diff := cmp.Diff(want, Table(t, path, "| phase |")); diff != "" {
		t.Errorf("Table() (-want +got):\n%s", diff)
	}
}

func TestRawTableAndCodeSpans(t *testing.T) {
	doc := "| path | what |\n|---|---|\n| `a`, `b/` | `c` and `d/e` |\n"
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := RawTable(t, path, "| path |")
	if diff := cmp.Diff([][]string{{"`a`, `b/`", "`c` and `d/e`"}}, rows); diff != "" {
		t.Errorf("RawTable() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "d/e"}, CodeSpans(rows[0][1])); diff != "" {
		t.Errorf("CodeSpans() (-want +got):\n%s", diff)
	}
}
