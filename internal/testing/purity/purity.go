// Package purity holds a package that calls itself pure to it: no client,
// no clock, no import of the controller that uses it. The controller reads
// the cluster and the time, and hands them in, so that the package's
// decisions are tested by tables alone.
package purity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// denied are the imports that would give a package a client or the
// controller's own state.
var denied = []string{
	"github.com/minitask-dev/minitask/controllers",
	"sigs.k8s.io/controller-runtime",
	"k8s.io/client-go",
}

// clock are the clock's readings; a time.Time or a time.Duration handed in
// is fine.
var clock = map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "Tick": true, "NewTimer": true, "NewTicker": true}

// Check fails t for each file of the package in dir, tests aside, that
// imports one of denied or reads the clock.
func Check(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, d := range denied {
				if path == d || strings.HasPrefix(path, d+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" && clock[sel.Sel.Name] {
				t.Errorf("%s reads the clock: time.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
