package params

import "strings"

// Values are what references expand to in one run's Pod.
type Values struct {
	// Params maps each string param's name to the run's value for it.
	Params map[string]string
	// Arrays maps each array param's name to its items, which
	// $(params.NAME[*]) expands to as whole elements of a list (ExpandList).
	Arrays map[string][]string
	// Objects maps each object param's name to its keys' values, which
	// $(params.NAME.KEY) expands to.
	Objects map[string]map[string]string
	// Workspaces maps each workspace's name to its mount path.
	Workspaces map[string]string
	// Results maps each result's name to the path of its file.
	Results map[string]string
}

// empty reports whether no reference could be replaced.
func (v Values) empty() bool {
	return len(v.Params) == 0 && len(v.Objects) == 0 && len(v.Workspaces) == 0 && len(v.Results) == 0
}

// lookup returns what a well-formed token expands to within a string, if v
// knows it. An array's items expand only as whole elements of a list, and an
// array or an object as a whole never within a string: admission refuses
// both, and such references are left as they are.
func (v Values) lookup(t token) (string, bool) {
	var m map[string]string
	switch {
	case t.kind == KindParam && t.star:
		return "", false
	case t.kind == KindParam && t.key != "":
		value, found := v.Objects[t.name][t.key]
		return value, found
	case t.kind == KindParam:
		m = v.Params
	case t.kind == KindWorkspace:
		m = v.Workspaces
	case t.kind == KindResult:
		m = v.Results
	}
	value, found := m[t.name]
	return value, found
}

// Substitute replaces each well-formed reference whose name values knows,
// params, workspaces and results alike; everything else is left as is.
//
// It is a single pass: a value that itself holds $(params.y) is inserted
// verbatim, so a run's values can never reach references the Task author did
// not write into the step.
func Substitute(s string, values Values) string {
	if values.empty() || !strings.Contains(s, open) {
		return s
	}
	var b strings.Builder
	copied := 0
	for t, ok := next(s, 0); ok; t, ok = next(s, t.end) {
		if t.err != nil {
			continue
		}
		v, found := values.lookup(t)
		if !found {
			continue
		}
		if copied == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[copied:t.start])
		b.WriteString(v)
		copied = t.end
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}
