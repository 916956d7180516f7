// Package params finds and substitutes the references a Task's steps make:
// $(params.NAME), $(params.NAME.KEY) (an object param's key),
// $(params.NAME[*]) (an array param's items, each an element of a command or
// args list), $(workspaces.NAME.path) and $(results.NAME.path). It is the one parser of that
// syntax: the admission webhook rejects what Find rejects, and the controller
// replaces what Substitute replaces, so the two can never disagree.
package params

import (
	"errors"
	"fmt"
	"strings"
)

// open starts every reference; what follows it must be one of the kinds'
// prefixes, or the text belongs to the shell ($(date), say) and is never ours
// to judge.
const open = "$("

// Kind is what a reference refers to, as its text names it: "params" in
// $(params.NAME).
type Kind string

const (
	// KindParam is $(params.NAME): the run's value for a param.
	KindParam Kind = "params"
	// KindWorkspace is $(workspaces.NAME.path): where a workspace is mounted.
	KindWorkspace Kind = "workspaces"
	// KindResult is $(results.NAME.path): the file a step writes a result's
	// value to.
	KindResult Kind = "results"
)

// kinds are every kind of reference, in the order their prefixes are tried.
var kinds = []Kind{KindParam, KindWorkspace, KindResult}

// Noun names one thing of the kind in messages: "param".
func (k Kind) Noun() string {
	switch k {
	case KindParam:
		return "param"
	case KindWorkspace:
		return "workspace"
	case KindResult:
		return "result"
	}
	return string(k)
}

// prefix is the text that opens a reference of the kind: "$(params.".
func (k Kind) prefix() string {
	switch k {
	case KindParam:
		return "$(params."
	case KindWorkspace:
		return "$(workspaces."
	case KindResult:
		return "$(results."
	}
	return open + string(k) + "."
}

// Ref is one well-formed reference in a string.
type Ref struct {
	// Kind says whether the reference is to a param, a workspace or a result.
	Kind Kind
	// Name is the param's, the workspace's or the result's name.
	Name string
	// Key is the object param's key a $(params.NAME.KEY) refers to; empty
	// for every other reference.
	Key string
	// Star marks $(params.NAME[*]): an array param's items.
	Star bool
	// Start and End are the byte offsets of the whole reference, "$(" to ")".
	Start, End int
}

// Find returns the references in s in order, or an error describing the first malformed one.
func Find(s string) ([]Ref, error) {
	var refs []Ref
	for t, ok := next(s, 0); ok; t, ok = next(s, t.end) {
		if t.err != nil {
			return nil, fmt.Errorf("malformed %s reference %q: %w", t.kind.Noun(), s[t.start:t.end], t.err)
		}
		refs = append(refs, Ref{Kind: t.kind, Name: t.name, Key: t.key, Star: t.star, Start: t.start, End: t.end})
	}
	return refs, nil
}

// token is one occurrence of a kind's prefix: a well-formed reference when
// err is nil, else the malformed text s[start:end] and what is wrong with it.
type token struct {
	kind       Kind
	name       string
	key        string
	star       bool
	start, end int
	err        error
}

// next scans s from offset from for the next occurrence of a kind's prefix.
// It never fails: a malformed reference is a token too, so that Find can
// report it and Substitute can step over it and go on.
func next(s string, from int) (token, bool) {
	for {
		i := strings.Index(s[from:], open)
		if i < 0 {
			return token{}, false
		}
		start := from + i
		for _, k := range kinds {
			if strings.HasPrefix(s[start:], k.prefix()) {
				return scan(s, start, k), true
			}
		}
		from = start + len(open)
	}
}

// scan reads the reference of kind k that opens at s[start:].
func scan(s string, start int, k Kind) token {
	bodyStart := start + len(k.prefix())
	bodyEnd := bodyStart
	for bodyEnd < len(s) && isBodyByte(k, s[bodyEnd]) {
		bodyEnd++
	}
	if bodyEnd < len(s) && s[bodyEnd] == ')' {
		t := token{kind: k, start: start, end: bodyEnd + 1}
		t.name, t.key, t.star, t.err = parseBody(k, s[bodyStart:bodyEnd])
		return t
	}
	// The body ran into a byte no body may hold. If a ")" closes it on the
	// same line, before another "$(" opens, the user meant that text as the
	// body; otherwise the reference was never closed.
	if closing := closingParen(s[bodyEnd:]); closing >= 0 {
		end := bodyEnd + closing + 1
		_, _, _, err := parseBody(k, s[bodyStart:end-1])
		return token{kind: k, start: start, end: end, err: err}
	}
	return token{kind: k, start: start, end: bodyEnd, err: errors.New(`missing ")"`)}
}

// closingParen returns the offset of the ")" in rest that closes a reference
// whose body holds bytes no body may hold, or -1 if a newline or another "$("
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

// isBodyByte reports whether c may appear between a kind's prefix and the
// closing ")": a name's bytes, the "." before a workspace's or a result's
// "path" or an object param's key, and a param's "[*]".
func isBodyByte(k Kind, c byte) bool {
	return isNameByte(c) || c == '.' || (k == KindParam && (c == '[' || c == '*' || c == ']'))
}

// parseBody returns the name (and, for a param, the key or the [*]) that
// body, the text between k's prefix and ")", refers to, or why body is
// malformed.
func parseBody(k Kind, body string) (name, key string, star bool, err error) {
	switch k {
	case KindWorkspace:
		name, err = parsePathBody(k, body, checkWorkspaceName)
		return name, "", false, err
	case KindResult:
		name, err = parsePathBody(k, body, checkParamName)
		return name, "", false, err
	}
	return parseParamBody(body)
}
