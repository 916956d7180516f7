package runpod

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps the package what its doc says: no client, no clock, and no
// import of the controller that uses it. The controller reads the cluster
// and the time, and hands them in.
func TestPure(t *testing.T) {
	denied := []string{
		"github.com/minitask-dev/minitask/controllers",
		"sigs.k8s.io/controller-runtime",
		"k8s.io/client-go",
	}
	// The clock's readings; a time.Time or a time.Duration handed in is fine.
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
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
