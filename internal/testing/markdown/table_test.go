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
