package params

// WholeArrayRef returns the array param that s refers to when s is exactly
// $(params.NAME[*]), the one place an array's items may go: a whole element
// of a step's command or args, which becomes one element per item.
func WholeArrayRef(s string) (name string, ok bool) {
	t, found := next(s, 0)
	if !found || t.err != nil || !t.star || t.start != 0 || t.end != len(s) {
		return "", false
	}
	return t.name, true
}

// ExpandList returns list with each element that is exactly
// $(params.NAME[*]) of an array values knows replaced by its items, none for
// an empty array, and every other element substituted as Substitute does.
// Nil stays nil.
func ExpandList(list []string, values Values) []string {
	return expandList(list, values, Substitute)
}

// expandList is ExpandList with substitute for the elements that are not an
// array's items, so that a Budget can count them.
func expandList(list []string, values Values, substitute func(string, Values) string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if name, ok := WholeArrayRef(s); ok {
			if items, known := values.Arrays[name]; known {
				out = append(out, items...)
				continue
			}
		}
		out = append(out, substitute(s, values))
	}
	return out
}

// ListSize returns the bytes of ExpandList(list, values) without building it.
func ListSize(list []string, values Values) int64 {
	var size int64
	for _, s := range list {
		if name, ok := WholeArrayRef(s); ok {
			if items, known := values.Arrays[name]; known {
				for _, item := range items {
					size += int64(len(item))
				}
				continue
			}
		}
		size += Size(s, values)
	}
	return size
}
