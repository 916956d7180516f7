package params

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSize(t *testing.T) {
	values := Values{Params: map[string]string{"x": "12345", "empty": ""}, Workspaces: map[string]string{"src": "/workspace/src"}, Results: map[string]string{"x": "/minitask/results/x"}}
	for _, s := range []string{
		"", "echo hi", "$(params.x)", "[$(params.x)$(params.x)]", "$(params.empty)",
		"$(params.other) $(params.x)", "$(params.) $(params.x", "$(params.x $(params.x)",
		"grüß $(params.x) ✓", "cd $(workspaces.src.path) && $(params.x)", "$(workspaces.src)",
		"$(workspaces.other.path)$(workspaces.src.path", "$(results.x.path)", "$(results.x.path)$(results.y.path)",
	} {
		if got, want := Size(s, values), int64(len(Substitute(s, values))); got != want {
			t.Errorf("Size(%q) = %d, want len(Substitute) = %d", s, got, want)
		}
		if got, want := Size(s, Values{}), int64(len(s)); got != want {
			t.Errorf("Size(%q, nil) = %d, want %d", s, got, want)
		}
	}
}

// TestBudget substitutes strings in turn within a budget: each result is
// built while the count stays within the limit, and none after it passes,
// though the count goes on.
func TestBudget(t *testing.T) {
	values := Values{
		Params:     map[string]string{"x": strings.Repeat("v", 10)},
		Workspaces: map[string]string{"src": "/workspace/src"},
	}
	type call struct {
		Result   string
		Used     int64
		Exceeded bool
	}
	tests := map[string]struct {
		limit int64
		in    []string
		want  []call
	}{
		"within": {
			limit: 24,
			in:    []string{"a$(params.x)", "b$(params.x)c"},
			want:  []call{{"avvvvvvvvvv", 11, false}, {"bvvvvvvvvvvc", 23, false}},
		},
		"exactly the limit": {
			limit: 11,
			in:    []string{"a$(params.x)"},
			want:  []call{{"avvvvvvvvvv", 11, false}},
		},
		"passed by the second string; the third is counted, not built": {
			limit: 15,
			in:    []string{"a$(params.x)", "$(params.x)", "short"},
			want:  []call{{"avvvvvvvvvv", 11, false}, {"", 21, true}, {"", 26, true}},
		},
		"workspace paths count as params do": {
			limit: 30,
			in:    []string{"cd $(workspaces.src.path)/$(params.x)"},
			want:  []call{{"cd /workspace/src/vvvvvvvvvv", 28, false}},
		},
		"text without references counts too": {
			limit: 3,
			in:    []string{"four"},
			want:  []call{{"", 4, true}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := NewBudget(tc.limit)
			var got []call
			for _, s := range tc.in {
				r := b.Substitute(s, values)
				got = append(got, call{r, b.Used(), b.Exceeded()})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBudgetBomb counts a gigabyte and a half of expansion, the issue's
// bomb: a 64 KiB value referenced a thousand times in each of twenty
// scripts, without building any of it.
func TestBudgetBomb(t *testing.T) {
	script := strings.Repeat("echo $(params.x)\n", 1000)
	values := Values{Params: map[string]string{"x": strings.Repeat("y", 64<<10)}}
	b := NewBudget(1 << 20)
	// AllocsPerRun calls the function twice: once to warm up.
	allocs := testing.AllocsPerRun(1, func() {
		*b = *NewBudget(1 << 20)
		for range 20 {
			if got := b.Substitute(script, values); got != "" {
				t.Fatalf("Substitute built %d bytes past the budget", len(got))
			}
		}
	})
	wantPerStep := int64(len(script)) + 1000*(64<<10-int64(len("$(params.x)")))
	if b.Used() != 20*wantPerStep || !b.Exceeded() {
		t.Errorf("Used() = %d, Exceeded() = %v; want %d, true", b.Used(), b.Exceeded(), 20*wantPerStep)
	}
	if allocs > 0 {
		t.Errorf("counting past the budget allocated %v times, want none", allocs)
	}
}

func BenchmarkSize(b *testing.B) {
	values := map[string]string{"greeting": "hello, world"}
	b.SetBytes(int64(len(benchScript)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Size(benchScript, Values{Params: values})
	}
}
