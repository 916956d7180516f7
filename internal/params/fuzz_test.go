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
		"$(workspaces.src.path)", "$(workspaces.src)", "$(workspaces.src.other)",
		"$(workspaces..path)", "$(workspaces.", "$(workspaces.src.path", "$(workspaces.Src.path)",
		"$(workspaces.a.b.path)", "$(params.x)$(workspaces.y.path)$(params.z", "$($(workspaces.a.path)",
		"$(results.x.path)", "$(workspaces.a b.path)", "$(results.x)", "$(results..path)", "$(results.x.path",
		"$(results.a.path)$(workspaces.a.path)$(params.a)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := Find(s)
		if err != nil && refs != nil {
			t.Fatalf("Find(%q) returned refs %v with error %v", s, refs, err)
		}
		values := Values{Params: map[string]string{}, Workspaces: map[string]string{}, Results: map[string]string{}}
		prevEnd := 0
		for _, r := range refs {
			if r.Start < prevEnd || r.End > len(s) || r.Start >= r.End {
				t.Fatalf("Find(%q): ref %+v out of order or out of range", s, r)
			}
			prevEnd = r.End
			text := s[r.Start:r.End]
			if !strings.HasPrefix(text, r.Kind.prefix()) || !strings.HasSuffix(text, ")") {
				t.Fatalf("Find(%q): ref %+v spans %q", s, r, text)
			}
			body := text[len(r.Kind.prefix()) : len(text)-1]
			switch r.Kind {
			case KindParam:
				if body != r.Name || checkParamName(body) != nil {
					t.Fatalf("Find(%q): ref %+v has name %q in text %q", s, r, r.Name, text)
				}
				values.Params[r.Name] = text
			case KindWorkspace:
				if body != r.Name+pathSuffix || checkWorkspaceName(r.Name) != nil {
					t.Fatalf("Find(%q): ref %+v has name %q in text %q", s, r, r.Name, text)
				}
				values.Workspaces[r.Name] = text
			case KindResult:
				if body != r.Name+pathSuffix || checkParamName(r.Name) != nil {
					t.Fatalf("Find(%q): ref %+v has name %q in text %q", s, r, r.Name, text)
				}
				values.Results[r.Name] = text
			default:
				t.Fatalf("Find(%q): ref %+v of unknown kind", s, r)
			}
		}
		if got := Substitute(s, Values{}); got != s {
			t.Fatalf("Substitute(%q, nothing) = %q", s, got)
		}
		// Replacing each reference with its own text must change nothing.
		if got := Substitute(s, values); got != s {
			t.Fatalf("Substitute(%q, itself) = %q", s, got)
		}
		// Replacing each with a marker must leave no well-formed reference
		// behind, and Size must count what Substitute builds.
		marked := Values{Params: map[string]string{}, Workspaces: map[string]string{}, Results: map[string]string{}}
		for _, r := range refs {
			switch r.Kind {
			case KindParam:
				marked.Params[r.Name] = "P"
			case KindWorkspace:
				marked.Workspaces[r.Name] = "/w"
			case KindResult:
				marked.Results[r.Name] = "/r"
			}
		}
		got := Substitute(s, marked)
		if size := Size(s, marked); size != int64(len(got)) {
			t.Fatalf("Size(%q) = %d, want len(Substitute) = %d", s, size, len(got))
		}
		if len(refs) > 0 && strings.Count(got, open) >= strings.Count(s, open) {
			t.Fatalf("Substitute(%q, markers) = %q: no reference was replaced", s, got)
		}
	})
}
