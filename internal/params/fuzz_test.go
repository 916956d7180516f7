package params

import (
	"strings"
	"testing"
)

func FuzzFind(f *testing.F) {
	for _, seed := range []string{
		"", "echo hi", "$(params.x)", "$(params.)", "$(params.", "$(params.x",
		"$(params.a b)", "$(params.x $(params.y)", "$$(params.x)", "$(date) $HOME",
		"$(params.a)$(params.b)\n$(params.-c)", "$(params.grüß)", "$(params.\n)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := Find(s)
		if err != nil && refs != nil {
			t.Fatalf("Find(%q) returned refs %v with error %v", s, refs, err)
		}
		values := map[string]string{}
		prevEnd := 0
		for _, r := range refs {
			if r.Start < prevEnd || r.End > len(s) || r.Start >= r.End {
				t.Fatalf("Find(%q): ref %+v out of order or out of range", s, r)
			}
			prevEnd = r.End
			text := s[r.Start:r.End]
			if !strings.HasPrefix(text, prefix) || !strings.HasSuffix(text, ")") {
				t.Fatalf("Find(%q): ref %+v spans %q", s, r, text)
			}
			if name := text[len(prefix) : len(text)-1]; name != r.Name || checkName(name) != nil {
				t.Fatalf("Find(%q): ref %+v has name %q in text %q", s, r, r.Name, text)
			}
			values[r.Name] = text
		}
		if got := Substitute(s, nil); got != s {
			t.Fatalf("Substitute(%q, nil) = %q", s, got)
		}
		if got := Substitute(s, map[string]string{}); got != s {
			t.Fatalf("Substitute(%q, {}) = %q", s, got)
		}
		// Replacing each reference with its own text must change nothing.
		if got := Substitute(s, values); got != s {
			t.Fatalf("Substitute(%q, itself) = %q", s, got)
		}
	})
}
