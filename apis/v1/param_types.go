package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ParamType is the type of a Task's param: what its default and every run's
// value hold.
// +kubebuilder:validation:Enum=string;array;object
type ParamType string

// The types a param may have.
const (
	// ParamTypeString: one string (the default when a param gives no type).
	ParamTypeString ParamType = "string"
	// ParamTypeArray: a list of strings; $(params.NAME[*]) as a whole item
	// of a step's command or args gives one item per string.
	ParamTypeArray ParamType = "array"
	// ParamTypeObject: strings by key, the keys the param's properties
	// declare; $(params.NAME.KEY) is one of them.
	ParamTypeObject ParamType = "object"
)

// PropertyType is the type of an object param's key: string, the only one.
// +kubebuilder:validation:Enum=string
type PropertyType string

// PropertyTypeString is the type of every key of an object param.
const PropertyTypeString PropertyType = "string"

// PropertySpec declares one key of an object param. Every key is a string.
type PropertySpec struct {
	// Type is the key's type; string, the only one, when absent.
	// +optional
	Type PropertyType `json:"type,omitempty"`
}

// +kubebuilder:object:generate=false

// +kubebuilder:object:generate=false

// ParamValue is a param's default or a run's value: a string, an array of
// strings or an object of strings, as its JSON says. Which one it holds is
// Type; the other fields are empty. The API server keeps it as written
// (its schema says only that it is there); admission checks it against
// the param's type.
type ParamValue struct {
	// Type is which of the fields below holds the value.
	Type ParamType `json:"-"`
	// StringVal is a string value.
	StringVal string `json:"-"`
	// ArrayVal is an array value; never nil when Type is array.
	ArrayVal []string `json:"-"`
	// ObjectVal is an object value; never nil when Type is object.
	ObjectVal map[string]string `json:"-"`
}

// NewStringValue returns s as a string value.
func NewStringValue(s string) *ParamValue {
	return &ParamValue{Type: ParamTypeString, StringVal: s}
}

// NewArrayValue returns items as an array value.
func NewArrayValue(items ...string) *ParamValue {
	if items == nil {
		items = []string{}
	}
	return &ParamValue{Type: ParamTypeArray, ArrayVal: items}
}

// NewObjectValue returns keys as an object value.
func NewObjectValue(keys map[string]string) *ParamValue {
	if keys == nil {
		keys = map[string]string{}
	}
	return &ParamValue{Type: ParamTypeObject, ObjectVal: keys}
}

// errParamValueShape is why a JSON value is no ParamValue.
var errParamValueShape = errors.New("a param value must be a string, an array of strings or an object of strings")

// UnmarshalJSON reads a JSON string, array of strings or object of strings.
// JSON null leaves v as it is, as encoding/json's convention has it.
func (v *ParamValue) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errParamValueShape
	}
	var err error
	switch data[0] {
	case 'n':
		if string(data) == "null" {
			return nil
		}
		return errParamValueShape
	case '"':
		var s string
		if err = json.Unmarshal(data, &s); err == nil {
			*v = ParamValue{Type: ParamTypeString, StringVal: s}
		}
	case '[':
		var items []string
		if err = json.Unmarshal(data, &items); err == nil {
			*v = *NewArrayValue(items...)
		}
	case '{':
		var keys map[string]string
		if err = json.Unmarshal(data, &keys); err == nil {
			*v = *NewObjectValue(keys)
		}
	default:
		return errParamValueShape
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errParamValueShape, err)
	}
	return nil
}

// MarshalJSON writes the value as the JSON of its type; a zero ParamValue
// (no type) is the empty string.
func (v ParamValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(v.Any())
}

// Any is the value as JSON decodes it into an any: a string, a []any of
// strings or a map[string]any of strings. Unstructured conversions and
// server-side apply see it so.
func (v ParamValue) Any() any {
	switch v.Type {
	case ParamTypeArray:
		items := make([]any, len(v.ArrayVal))
		for i, item := range v.ArrayVal {
			items[i] = item
		}
		return items
	case ParamTypeObject:
		keys := make(map[string]any, len(v.ObjectVal))
		for k, item := range v.ObjectVal {
			keys[k] = item
		}
		return keys
	default:
		return v.StringVal
	}
}

// ToUnstructured implements apimachinery's value.UnstructuredConverter, so
// that unstructured and server-side apply conversions see the JSON value.
func (v ParamValue) ToUnstructured() any { return v.Any() }

// DeepCopyInto copies v into out, maps and slices included.
func (v *ParamValue) DeepCopyInto(out *ParamValue) {
	*out = *v
	if v.ArrayVal != nil {
		out.ArrayVal = append(make([]string, 0, len(v.ArrayVal)), v.ArrayVal...)
	}
	if v.ObjectVal != nil {
		out.ObjectVal = make(map[string]string, len(v.ObjectVal))
		for k, item := range v.ObjectVal {
			out.ObjectVal[k] = item
		}
	}
}

// DeepCopy returns a copy of v.
func (v *ParamValue) DeepCopy() *ParamValue {
	if v == nil {
		return nil
	}
	out := new(ParamValue)
	v.DeepCopyInto(out)
	return out
}
