package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

// TestReadmeLayoutIsThePackages holds README.md's layout table to the Go
// packages on disk, so that a package added, moved or removed is said where
// a newcomer looks first.
//
// A Go package here is a directory that holds a .go file, whatever its build
// tags, below the repository's top: testdata, the build outputs bin/ and
// dist/, and what Go itself skips (names starting with . or _) excluded; a
// module of its own (hack/kwok/stagetest) counts. A row names its paths in
// backquotes in its first column. The rule:
//
//   - Every path a row names exists (a directory, or a file such as main.go).
//   - A package is covered by a row that names its directory, or a Go file in
//     it (main.go, the manager, covers the top directory).
//   - Else by the nearest row above it, the one that names the longest
//     directory that holds it: that row's second column names, in
//     backquotes, the package's path below that directory or a directory on
//     the way to it (`internal/testing/`'s row names `testenv`;
//     `cmd/kubectl-task`'s names `internal/dashboard`, which covers
//     internal/dashboard/live too). A package with a row of its own is that
//     row's, not its parent's.
func TestReadmeLayoutIsThePackages(t *testing.T) {
	type row struct {
		dirs  []string // the directories the first column names
		files []string // the files it names
		names []string // the inline code of the second column, a trailing / dropped
	}
	var rows []row
	for _, cells := range markdown.RawTable(t, "README.md", "| path | what |") {
		var r row
		paths := markdown.CodeSpans(cells[0])
		if len(paths) == 0 {
			t.Errorf("README.md's layout table has a row that names no path in backquotes: %s", cells[0])
		}
		for _, p := range paths {
			info, err := os.Stat(p)
			switch {
			case err != nil:
				t.Errorf("README.md's layout table names %s, which does not exist", p)
			case info.IsDir():
				r.dirs = append(r.dirs, path.Clean(p))
			default:
				r.files = append(r.files, path.Clean(p))
			}
		}
		for _, name := range markdown.CodeSpans(cells[1]) {
			r.names = append(r.names, strings.TrimSuffix(name, "/"))
		}
		rows = append(rows, r)
	}

	for _, pkg := range goPackages(t) {
		var nearest *row // the row of the longest directory above pkg
		var nearestDir string
		covered := false
		for i := range rows {
			r := &rows[i]
			if slices.Contains(r.dirs, pkg) || slices.ContainsFunc(r.files, func(f string) bool {
				return strings.HasSuffix(f, ".go") && path.Dir(f) == pkg
			}) {
				covered = true
				break
			}
			for _, dir := range r.dirs {
				if strings.HasPrefix(pkg, dir+"/") && len(dir) > len(nearestDir) {
					nearest, nearestDir = r, dir
				}
			}
		}
		if covered {
			continue
		}
		if nearest == nil {
			t.Errorf("package %s has no row in README.md's layout table", pkg)
			continue
		}
		below := strings.TrimPrefix(pkg, nearestDir+"/")
		if !slices.ContainsFunc(nearest.names, func(name string) bool {
			return below == name || strings.HasPrefix(below, name+"/")
		}) {
			t.Errorf("package %s has no row in README.md's layout table, and the row of %s does not name `%s` (or a directory on the way to it)",
				pkg, nearestDir, below)
		}
	}
}

// goPackages returns the directories, relative to the top of the
// repository (the test's working directory), that hold a .go file, as
// TestReadmeLayoutIsThePackages counts them.
func goPackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				p == "bin" || p == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(p)); strings.HasSuffix(name, ".go") && !slices.Contains(pkgs, dir) {
			pkgs = append(pkgs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the repository: %v", err)
	}
	if len(pkgs) == 0 {
		t.Fatal("found no Go package: the test must run at the top of the repository")
	}
	return pkgs
}
