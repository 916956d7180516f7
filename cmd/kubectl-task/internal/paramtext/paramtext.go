// Package paramtext is a param's value as users read and type it: on
// kubectl task's command line (-p NAME=VALUE), in describe, and in
// the dashboard's pages and start form. A string is itself; an array or an
// object is its JSON, and may also be typed in a shorter form (items or
// KEY=VALUE pairs between commas). Which form a text is read in is the
// type the Task declares for the param, never a guess from the text: "[a]"
// is a string to a string param.
package paramtext

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// Text is v as users read it: a string as it is, an array or an object as
// its JSON on one line (an object's keys sorted, as encoding/json writes
// them; <, > and & as they are, for a terminal, not a web page, to show).
func Text(v v1.ParamValue) string {
	if v.Type != v1.ParamTypeArray && v.Type != v1.ParamTypeObject {
		return v.StringVal
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v.Any()); err != nil {
		// A []any of strings or a map[string]any of strings always encodes.
		panic(fmt.Sprintf("param value %#v: %v", v, err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TypeName is spec's type as messages name it: "an array".
func TypeName(spec v1.ParamSpec) string { return runstate.TypeWithArticle(spec.TypeOrDefault()) }

// Syntax says how a value of spec's type is typed, for messages.
func Syntax(spec v1.ParamSpec) string {
	switch spec.TypeOrDefault() {
	case v1.ParamTypeArray:
		return `a JSON array of strings, ["a","b"], or items between commas, a,b`
	case v1.ParamTypeObject:
		declared := runstate.PropertyNames(&spec)
		example := "KEY=VALUE,..."
		if len(declared) > 0 {
			example = declared[0] + "=VALUE"
			if len(declared) > 1 {
				example += "," + declared[1] + "=VALUE"
			}
		}
		return `a JSON object of strings, {"KEY":"VALUE"}, or KEY=VALUE pairs between commas, ` + example
	default:
		return "any text"
	}
}

// Parse reads text as a value of the type spec declares:
//
//   - string: text as it is;
//   - array: a JSON array of strings when text starts with "[", else the
//     items between commas ("a,b" is ["a","b"], "" is no item);
//   - object: a JSON object of strings when text starts with "{", else
//     KEY=VALUE pairs between commas, each value up to the next comma.
//
// An object must give every key the param declares (runstate.CheckValue);
// keys it does not declare are let be, as the controller lets them be. The
// error says what was expected; it does not name the param, which its
// caller does.
func Parse(spec v1.ParamSpec, text string) (v1.ParamValue, error) {
	switch spec.TypeOrDefault() {
	case v1.ParamTypeArray:
		return parseArray(text)
	case v1.ParamTypeObject:
		v, err := parseObject(text)
		if err != nil {
			return v1.ParamValue{}, err
		}
		// The controller's own check, so that what start refuses is what
		// would end the run InvalidParams.
		if wrong := runstate.CheckValue(&spec, &v); wrong != "" {
			return v1.ParamValue{}, errors.New("it " + wrong)
		}
		return v, nil
	default:
		return *v1.NewStringValue(text), nil
	}
}

func parseArray(text string) (v1.ParamValue, error) {
	if strings.HasPrefix(strings.TrimSpace(text), "[") {
		var items []string
		if err := json.Unmarshal([]byte(text), &items); err != nil {
			return v1.ParamValue{}, fmt.Errorf("%q is not a JSON array of strings: %s", text, jsonReason(err))
		}
		return *v1.NewArrayValue(items...), nil
	}
	if text == "" {
		return *v1.NewArrayValue(), nil
	}
	return *v1.NewArrayValue(strings.Split(text, ",")...), nil
}

func parseObject(text string) (v1.ParamValue, error) {
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		var keys map[string]string
		if err := json.Unmarshal([]byte(text), &keys); err != nil {
			return v1.ParamValue{}, fmt.Errorf("%q is not a JSON object of strings: %s", text, jsonReason(err))
		}
		return *v1.NewObjectValue(keys), nil
	}
	keys := map[string]string{}
	if text == "" {
		return *v1.NewObjectValue(keys), nil
	}
	for pair := range strings.SplitSeq(text, ",") {
		key, value, ok := strings.Cut(pair, "=")
		if !ok || key == "" {
			return v1.ParamValue{}, fmt.Errorf("%q is not KEY=VALUE", pair)
		}
		if _, twice := keys[key]; twice {
			return v1.ParamValue{}, fmt.Errorf("key %q is given twice", key)
		}
		keys[key] = value
	}
	return *v1.NewObjectValue(keys), nil
}

// jsonReason is why encoding/json refused a text, in its own words but
// without the Go types it names.
func jsonReason(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return "a JSON " + typeErr.Value + " where a string goes"
	}
	return err.Error()
}
