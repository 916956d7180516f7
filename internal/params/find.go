// Package params finds and substitutes $(params.NAME) references in a Task's
// step images and scripts. It is the one parser of that syntax: the admission
// webhook rejects what Find rejects, and the controller replaces what
// Substitute replaces, so the two can never disagree.
package params

import (
	"errors"
	"fmt"
	"strings"
)

// prefix opens every reference; text without it (such as $(date) or $HOME)
// belongs to the shell and is never ours to judge.
const prefix = "$(params."

// namePattern is the rule a name must follow, as the API's ParamSpec declares it.
const namePattern = `^[a-zA-Z_][a-zA-Z0-9_-]*$`

// Ref is one $(params.NAME) reference in a string.
type Ref struct {
	// Name is NAME, the param the reference refers to.
	Name string
	// Start and End are the byte offsets of the whole "$(params.NAME)".
	Start, End int
}

// Find returns the references in s in order, or an error describing the first malformed one.
func Find(s string) ([]Ref, error) {
	var refs []Ref
	for t, ok := next(s, 0); ok; t, ok = next(s, t.end) {
		if t.err != nil {
			return nil, fmt.Errorf("malformed param reference %q: %w", s[t.start:t.end], t.err)
		}
		refs = append(refs, Ref{Name: t.name, Start: t.start, End: t.end})
	}
	return refs, nil
}

// token is one occurrence of prefix: a well-formed reference when err is nil,
// else the malformed text s[start:end] and what is wrong with it.
type token struct {
	name       string
	start, end int
	err        error
}

// next scans s from offset from for the next occurrence of prefix. It never
// fails: a malformed reference is a token too, so that Find can report it and
// Substitute can step over it and go on.
func next(s string, from int) (token, bool) {
	i := strings.Index(s[from:], prefix)
	if i < 0 {
		return token{}, false
	}
	start := from + i
	nameStart := start + len(prefix)
	nameEnd := nameStart
	for nameEnd < len(s) && isNameByte(s[nameEnd]) {
		nameEnd++
	}
	if nameEnd < len(s) && s[nameEnd] == ')' {
		t := token{name: s[nameStart:nameEnd], start: start, end: nameEnd + 1}
		t.err = checkName(t.name)
		return t, true
	}
	// The name ran into a byte no name may hold. If a ")" closes it on the
	// same line, before another "$(" opens, the user meant that text as the
	// name; otherwise the reference was never closed.
	if closing := closingParen(s[nameEnd:]); closing >= 0 {
		end := nameEnd + closing + 1
		return token{start: start, end: end, err: checkName(s[nameStart : end-1])}, true
	}
	return token{start: start, end: nameEnd, err: errors.New(`missing ")"`)}, true
}

// closingParen returns the offset of the ")" in rest that closes a reference
// whose name holds bytes no name may hold, or -1 if a newline or another "$("
// comes first or rest has no ")".
func closingParen(rest string) int {
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ')':
			return i
		case '\n':
			return -1
		case '$':
			if i+1 < len(rest) && rest[i+1] == '(' {
				return -1
			}
		}
	}
	return -1
}

// checkName says why name does not match namePattern, or nil if it does.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case !isNameStart(name[0]):
		return fmt.Errorf("name %q does not match %s", name, namePattern)
	}
	for i := 1; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("name %q does not match %s", name, namePattern)
		}
	}
	return nil
}

// isNameStart reports whether c may begin a name.
func isNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// isNameByte reports whether c may appear in a name after its first byte.
func isNameByte(c byte) bool {
	return isNameStart(c) || ('0' <= c && c <= '9') || c == '-'
}
