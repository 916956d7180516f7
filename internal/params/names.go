package params

import (
	"errors"
	"fmt"
	"strings"
)

// This file holds the rules a reference's name follows, as the API declares
// the names of params, workspaces and results (a result's name follows a
// param's rule), so that a reference that could never
// name anything is malformed rather than merely undeclared.

const (
	// paramNamePattern is the rule a param's name follows, as ParamSpec declares it.
	paramNamePattern = `^[a-zA-Z_][a-zA-Z0-9_-]*$`
	// workspaceNamePattern is the rule a workspace's name follows, as
	// WorkspaceDeclaration declares it: a DNS-1123 label.
	workspaceNamePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// maxWorkspaceName is a DNS-1123 label's limit.
	maxWorkspaceName = 63

	// pathSuffix ends the body of every workspace and result reference: a
	// path is the one thing a step may ask of either.
	pathSuffix = ".path"
)

// checkParamName says why name does not match paramNamePattern, or nil if it does.
func checkParamName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case !isNameStart(name[0]):
		return fmt.Errorf("name %q does not match %s", name, paramNamePattern)
	}
	for i := 1; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("name %q does not match %s", name, paramNamePattern)
		}
	}
	return nil
}

// starSuffix follows an array param's name in $(params.NAME[*]).
const starSuffix = "[*]"

// parseParamBody returns what body, the text of a $(params.BODY), refers to:
// NAME, NAME.KEY (an object param's key, a name's bytes) or NAME[*] (an
// array param's items), or why it is malformed.
func parseParamBody(body string) (name, key string, star bool, err error) {
	name, star = strings.CutSuffix(body, starSuffix)
	if !star && strings.ContainsAny(name, "[*]") {
		return "", "", false, fmt.Errorf("%q: only [*], after an array param's name, may follow it", body)
	}
	name, key, dotted := strings.Cut(name, ".")
	if err := checkParamName(name); err != nil {
		return "", "", false, err
	}
	switch {
	case dotted && star:
		return "", "", false, fmt.Errorf("%q: [*] follows an array param's name, never an object's key", body)
	case dotted:
		if err := checkKey(name, key); err != nil {
			return "", "", false, err
		}
	}
	return name, key, star, nil
}

// IsReferableKey reports whether a reference, $(params.NAME.KEY), can name
// key, an object param's property: one or more of a name's bytes (letters,
// digits, '_' and '-'). A property no reference can name (a.b, say) is
// refused at admission.
func IsReferableKey(key string) bool {
	return checkKey("", key) == nil
}

// checkKey says why key, after "$(params.NAME.", is no object key that a
// reference can name (a name's bytes, as many as the API lets a key have),
// or nil.
func checkKey(name, key string) error {
	if key == "" {
		return fmt.Errorf("empty key after param %q", name)
	}
	for i := 0; i < len(key); i++ {
		if !isNameByte(key[i]) {
			return fmt.Errorf("key %q of param %q: a key in a reference is letters, digits, '_' and '-'", key, name)
		}
	}
	return nil
}

// parsePathBody returns the workspace or result that body, "NAME.path",
// refers to, or why it is malformed; checkName is the rule k's names follow.
func parsePathBody(k Kind, body string, checkName func(string) error) (string, error) {
	if body == "" {
		return "", errors.New("empty name")
	}
	name, ok := strings.CutSuffix(body, pathSuffix)
	if !ok {
		before, attr, found := strings.Cut(body, ".")
		switch {
		case !found:
			return "", fmt.Errorf(`missing ".path" after the %s's name: write $(%s.%s.path)`, k.Noun(), k, body)
		case before == "":
			return "", errors.New("empty name")
		default:
			return "", fmt.Errorf(`unknown field %q of %s %q: only "path" may be referred to`, attr, k.Noun(), before)
		}
	}
	return name, checkName(name)
}

// checkWorkspaceName says why name is no DNS-1123 label, or nil if it is one.
func checkWorkspaceName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case len(name) > maxWorkspaceName:
		return fmt.Errorf("name %q is longer than %d characters", name, maxWorkspaceName)
	case !isLowerAlnum(name[0]) || !isLowerAlnum(name[len(name)-1]):
		return fmt.Errorf("name %q does not match %s", name, workspaceNamePattern)
	}
	for i := 1; i < len(name)-1; i++ {
		if !isLowerAlnum(name[i]) && name[i] != '-' {
			return fmt.Errorf("name %q does not match %s", name, workspaceNamePattern)
		}
	}
	return nil
}

// isNameStart reports whether c may begin a param's name.
func isNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// isNameByte reports whether c may appear in a param's name after its first
// byte; every byte of a workspace's name is one too.
func isNameByte(c byte) bool {
	return isNameStart(c) || ('0' <= c && c <= '9') || c == '-'
}

// isLowerAlnum reports whether c is a lower-case letter or a digit.
func isLowerAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
}
