package params

// Budget bounds the bytes that a series of substitutions may produce: the
// text of a whole Pod, say, where a short reference repeated many times and a
// long value would otherwise multiply into gigabytes. It counts every
// substitution's result, and once the count passes the limit it builds no more
// text: the rest is only counted, so that Used reports the whole size without
// that text ever being made. The zero Budget has a limit of 0.
type Budget struct {
	limit, used int64
}

// NewBudget returns a Budget of limit bytes.
func NewBudget(limit int64) *Budget {
	return &Budget{limit: limit}
}

// Substitute returns Substitute(s, values) and charges its length to b, or
// returns "" if that length takes b past its limit, or b was past it already.
// The length is counted before any text is built.
func (b *Budget) Substitute(s string, values Values) string {
	b.used += Size(s, values)
	if b.Exceeded() {
		return ""
	}
	return Substitute(s, values)
}

// ExpandList returns ExpandList(list, values) and charges its bytes to b, or
// nil if they take b past its limit, or b was past it already. Like
// Substitute, it counts before it builds.
func (b *Budget) ExpandList(list []string, values Values) []string {
	b.used += ListSize(list, values)
	if b.Exceeded() {
		return nil
	}
	return ExpandList(list, values)
}

// Exceeded reports whether the substitutions so far produce more than the limit.
func (b *Budget) Exceeded() bool { return b.used > b.limit }

// Used is the length of every substitution's result so far, whether built or
// only counted.
func (b *Budget) Used() int64 { return b.used }

// Limit is the budget's limit in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Size returns len(Substitute(s, values)) without building the result: one
// scan of s, whatever the values' lengths.
func Size(s string, values Values) int64 {
	size := int64(len(s))
	if values.empty() {
		return size
	}
	for t, ok := next(s, 0); ok; t, ok = next(s, t.end) {
		if t.err != nil {
			continue
		}
		if v, found := values.lookup(t); found {
			size += int64(len(v)) - int64(t.end-t.start)
		}
	}
	return size
}
