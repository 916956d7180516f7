package apicompat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

const compatibilityDoc = "../../docs/api-compatibility.md"

// TestDocsListEveryKind holds the table of what make verify-api refuses to
// the kinds of problem.go: a kind the table lacks is a refusal no reader
// can look up.
func TestDocsListEveryKind(t *testing.T) {
	var documented []string
	for _, row := range markdown.Table(t, compatibilityDoc, "| kind | change |") {
		for _, kind := range strings.Split(row[0], ",") {
			documented = append(documented, strings.Trim(strings.TrimSpace(kind), "`"))
		}
	}
	if diff := cmp.Diff(kindsInCode(t), documented, cmpSorted); diff != "" {
		t.Errorf("%s's kinds (+) against problem.go's (-):\n%s", compatibilityDoc, diff)
	}
}

// TestDocsListEveryFrozenRelease holds the table of frozen releases to
// FROZEN_RELEASES, in its order, and to the versions each file serves and
// stores.
func TestDocsListEveryFrozenRelease(t *testing.T) {
	type row struct{ File, Versions, Storage string }
	var want []row
	for _, path := range frozenReleases(t) {
		r, err := LoadRelease(path)
		if err != nil {
			t.Fatal(err)
		}
		versions, storage := describeVersions(t, r)
		rel, err := filepath.Rel("../..", path)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, row{File: rel, Versions: versions, Storage: storage})
	}
	var got []row
	for _, cells := range markdown.Table(t, compatibilityDoc, "| file | release | versions | storage |") {
		got = append(got, row{File: cells[0], Versions: cells[2], Storage: cells[3]})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s's frozen releases (+) against FROZEN_RELEASES (-):\n%s", compatibilityDoc, diff)
	}
}

// describeVersions says which versions every CRD of r serves, as the docs
// do ("v1alpha1 (deprecated), v1beta1"), and which it stores.
func describeVersions(t *testing.T, r Release) (versions, storage string) {
	t.Helper()
	for i, name := range sortedKeys(r.CRDs) {
		crd := r.CRDs[name]
		var served []string
		for _, v := range crd.Spec.Versions {
			switch {
			case v.Served && v.Deprecated:
				served = append(served, v.Name+" (deprecated)")
			case v.Served:
				served = append(served, v.Name)
			}
		}
		v, s := strings.Join(served, ", "), storageVersion(crd)
		if i > 0 && (v != versions || s != storage) {
			t.Fatalf("%s: %s serves %s and stores %s, unlike the other CRDs: the docs' table has one row a release", r.Name, name, v, s)
		}
		versions, storage = v, s
	}
	return versions, storage
}

// kindsInCode returns the values of problem.go's Kind constants.
func kindsInCode(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "problem.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if typ, ok := spec.Type.(*ast.Ident); !ok || typ.Name != "Kind" {
			return true
		}
		for _, value := range spec.Values {
			lit, ok := value.(*ast.BasicLit)
			if !ok {
				t.Fatalf("problem.go: a Kind whose value is not a literal: %#v", value)
			}
			kind, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, kind)
		}
		return true
	})
	if len(kinds) == 0 {
		t.Fatal("problem.go declares no Kind")
	}
	return kinds
}

// cmpSorted compares string slices as sets with repeats, in any order.
var cmpSorted = cmp.Transformer("sorted", func(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
})
