package conversion

import (
	"encoding/json"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Neither spoke has typed params: in both, a param's default and a run's
// value are strings (v1alpha1 keeps v1beta1's params in its stash). An
// array or object value is its JSON text there, and its type rides in the
// stash's v1 section, by param name, so that it comes back; a string param
// needs no entry. A spoke writer that edits the text wins, as long as the
// text still parses as the stashed type; one that does not is refused at
// admission (TextMatchesType), and converts as a string should it ever
// reach conversion, which must not fail.

// paramTypeStash is the v1 part of a Task param that no spoke expresses.
type paramTypeStash struct {
	Name       string                     `json:"name"`
	Type       v1.ParamType               `json:"type,omitempty"`
	Properties map[string]v1.PropertySpec `json:"properties,omitempty"`
}

// valueTypeStash is the type of a run's non-string param value.
type valueTypeStash struct {
	Name string       `json:"name"`
	Type v1.ParamType `json:"type"`
}

// paramSpecsFromHub returns params as a spoke holds them, and the types
// and properties of those that are not plain strings.
func paramSpecsFromHub(params []v1.ParamSpec) ([]v1beta1.ParamSpec, []paramTypeStash) {
	if params == nil {
		return nil, nil
	}
	spoke := make([]v1beta1.ParamSpec, len(params))
	var types []paramTypeStash
	for i := range params {
		p := &params[i]
		spoke[i] = v1beta1.ParamSpec{Name: p.Name, Description: p.Description}
		if p.Default != nil {
			text := valueText(p.Default)
			spoke[i].Default = &text
		}
		if p.Type != "" || p.Properties != nil || (p.Default != nil && p.Default.Type != v1.ParamTypeString) {
			types = append(types, paramTypeStash{Name: p.Name, Type: p.Type, Properties: p.Properties})
		}
	}
	return spoke, types
}

// paramSpecsToHub returns a spoke's params as v1 holds them, each with the
// type and properties stashed under its name.
func paramSpecsToHub(params []v1beta1.ParamSpec, stashed []paramTypeStash) []v1.ParamSpec {
	if params == nil {
		return nil
	}
	byName := firstByName(stashed, func(s *paramTypeStash) string { return s.Name })
	hub := make([]v1.ParamSpec, len(params))
	for i := range params {
		p := &params[i]
		hub[i] = v1.ParamSpec{Name: p.Name, Description: p.Description}
		valueType := v1.ParamTypeString
		if s, ok := byName[p.Name]; ok {
			hub[i].Type, hub[i].Properties = s.Type, s.Properties
			valueType = hub[i].TypeOrDefault()
		}
		if p.Default != nil {
			hub[i].Default = valueFromText(*p.Default, valueType)
		}
	}
	return hub
}

// paramsFromHub returns a run's params as a spoke holds them, and the
// types of the values that are not strings.
func paramsFromHub(params []v1.Param) ([]v1beta1.Param, []valueTypeStash) {
	if params == nil {
		return nil, nil
	}
	spoke := make([]v1beta1.Param, len(params))
	var types []valueTypeStash
	for i := range params {
		p := &params[i]
		spoke[i] = v1beta1.Param{Name: p.Name, Value: valueText(&p.Value)}
		if p.Value.Type != "" && p.Value.Type != v1.ParamTypeString {
			types = append(types, valueTypeStash{Name: p.Name, Type: p.Value.Type})
		}
	}
	return spoke, types
}

// paramsToHub returns a spoke's run params as v1 holds them, each value of
// the type stashed under its name.
func paramsToHub(params []v1beta1.Param, stashed []valueTypeStash) []v1.Param {
	if params == nil {
		return nil
	}
	byName := firstByName(stashed, func(s *valueTypeStash) string { return s.Name })
	hub := make([]v1.Param, len(params))
	for i := range params {
		p := &params[i]
		valueType := v1.ParamTypeString
		if s, ok := byName[p.Name]; ok {
			valueType = s.Type
		}
		hub[i] = v1.Param{Name: p.Name, Value: v1.ParamValue{Type: v1.ParamTypeString, StringVal: p.Value}}
		if valueType != v1.ParamTypeString {
			// valueFromText, but a string value, nearly every one, is
			// made in place.
			hub[i].Value = *valueFromText(p.Value, valueType)
		}
	}
	return hub
}

// valueText is how a spoke writes value: a string as it is, an array or
// object as its JSON text (keys sorted), which always encodes.
func valueText(value *v1.ParamValue) string {
	if value.Type != v1.ParamTypeArray && value.Type != v1.ParamTypeObject {
		return value.StringVal
	}
	data, _ := json.Marshal(value) //nolint:errchkjson // strings only
	return string(data)
}

// valueFromText reads text, a spoke's value, as a value of valueType: an
// array or object from its JSON, else (or when the JSON is not of that
// type) the string itself.
func valueFromText(text string, valueType v1.ParamType) *v1.ParamValue {
	if valueType == v1.ParamTypeArray || valueType == v1.ParamTypeObject {
		if value, ok := ParseValueText(text, valueType); ok {
			return value
		}
	}
	return v1.NewStringValue(text)
}

// ParseValueText reads text as the JSON of a value of valueType, an array
// or an object of strings, and reports whether it is one. Admission
// refuses a spoke write whose text is not (TextMatchesType's caller).
func ParseValueText(text string, valueType v1.ParamType) (*v1.ParamValue, bool) {
	var value v1.ParamValue
	if err := json.Unmarshal([]byte(text), &value); err != nil || value.Type != valueType {
		return nil, false
	}
	return &value, true
}

// firstByName indexes items by name, the first of a name winning, as for
// every list a stash holds by key (a forged one may name one twice).
func firstByName[T any](items []T, name func(*T) string) map[string]*T {
	if len(items) == 0 {
		return nil // what nearly every object has: no map to make
	}
	byName := make(map[string]*T, len(items))
	for i := range items {
		if _, seen := byName[name(&items[i])]; !seen {
			byName[name(&items[i])] = &items[i]
		}
	}
	return byName
}
