package params

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// typedValues are a run's values with every kind of param.
var typedValues = Values{
	Params:  map[string]string{"mode": "fast", "files": "not the array"},
	Arrays:  map[string][]string{"files": {"a.go", "b c.go", "$(params.mode)"}, "none": {}},
	Objects: map[string]map[string]string{"image": {"repo": "example.org/app", "tag": "1.2"}},
}

func TestSubstituteTyped(t *testing.T) {
	tests := map[string]struct {
		s    string
		want string
	}{
		"an object's key":                 {s: "$(params.image.repo):$(params.image.tag)", want: "example.org/app:1.2"},
		"an object's key not declared":    {s: "$(params.image.digest)", want: "$(params.image.digest)"},
		"a string param has no keys":      {s: "$(params.mode.x)", want: "$(params.mode.x)"},
		"an array within a string":        {s: "ls $(params.files[*])", want: "ls $(params.files[*])"},
		"an array alone is no string":     {s: "$(params.files[*])", want: "$(params.files[*])"},
		"an object as a whole":            {s: "$(params.image)", want: "$(params.image)"},
		"a string param beside an object": {s: "$(params.mode)/$(params.image.tag)", want: "fast/1.2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Substitute(tc.s, typedValues)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Substitute(%q) (-want +got):\n%s", tc.s, diff)
			}
			if size := Size(tc.s, typedValues); size != int64(len(got)) {
				t.Errorf("Size(%q) = %d, want len(Substitute) = %d", tc.s, size, len(got))
			}
		})
	}
}

func TestExpandList(t *testing.T) {
	tests := map[string]struct {
		list []string
		want []string
	}{
		"nil":                        {list: nil, want: nil},
		"one element per item":       {list: []string{"gofmt", "-l", "$(params.files[*])"}, want: []string{"gofmt", "-l", "a.go", "b c.go", "$(params.mode)"}},
		"an empty array: no items":   {list: []string{"ls", "$(params.none[*])", "-a"}, want: []string{"ls", "-a"}},
		"twice":                      {list: []string{"$(params.files[*])", "--", "$(params.files[*])"}, want: []string{"a.go", "b c.go", "$(params.mode)", "--", "a.go", "b c.go", "$(params.mode)"}},
		"within an element: left":    {list: []string{"x$(params.files[*])"}, want: []string{"x$(params.files[*])"}},
		"an unknown array: left":     {list: []string{"$(params.other[*])"}, want: []string{"$(params.other[*])"}},
		"other elements substituted": {list: []string{"$(params.mode)", "$(params.image.repo)"}, want: []string{"fast", "example.org/app"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ExpandList(tc.list, typedValues)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ExpandList(%q) (-want +got):\n%s", tc.list, diff)
			}
			var built int64
			for _, s := range got {
				built += int64(len(s))
			}
			if size := ListSize(tc.list, typedValues); size != built {
				t.Errorf("ListSize(%q) = %d, want %d", tc.list, size, built)
			}
		})
	}
}

func TestBudgetExpandList(t *testing.T) {
	list := []string{"$(params.files[*])"}
	b := NewBudget(int64(len("a.gob c.go$(params.mode)")))
	if got := b.ExpandList(list, typedValues); len(got) != 3 || b.Exceeded() {
		t.Fatalf("within the budget: got %q, exceeded %v", got, b.Exceeded())
	}
	if got := b.ExpandList(list, typedValues); got != nil || !b.Exceeded() {
		t.Errorf("past the budget: got %q, exceeded %v; want nil, true", got, b.Exceeded())
	}
}
