package paramtext

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

var (
	stringParam = v1.ParamSpec{Name: "greeting"}
	arrayParam  = v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray}
	objectParam = v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject,
		Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}}}
	freeObject = v1.ParamSpec{Name: "labels", Type: v1.ParamTypeObject}
)

// TestParse checks that a text is read as the type the Task declares, in
// either form, and that a text of another type is refused saying why.
func TestParse(t *testing.T) {
	tests := map[string]struct {
		spec    v1.ParamSpec
		text    string
		want    v1.ParamValue
		wantErr string
	}{
		"a string, as it is":                {spec: stringParam, text: "hello, world", want: *v1.NewStringValue("hello, world")},
		"JSON text to a string param: text": {spec: stringParam, text: `["a"]`, want: *v1.NewStringValue(`["a"]`)},
		"an empty string":                   {spec: stringParam, text: "", want: *v1.NewStringValue("")},
		"an array as JSON":                  {spec: arrayParam, text: `["a.go", "b,c.go"]`, want: *v1.NewArrayValue("a.go", "b,c.go")},
		"an array between commas":           {spec: arrayParam, text: "a.go,b.go", want: *v1.NewArrayValue("a.go", "b.go")},
		"one item":                          {spec: arrayParam, text: "a.go", want: *v1.NewArrayValue("a.go")},
		"an empty text: no item":            {spec: arrayParam, text: "", want: *v1.NewArrayValue()},
		"an empty JSON array":               {spec: arrayParam, text: "[]", want: *v1.NewArrayValue()},
		"an array of numbers":               {spec: arrayParam, text: "[1, 2]", wantErr: `"[1, 2]" is not a JSON array of strings: a JSON number where a string goes`},
		"an array cut short":                {spec: arrayParam, text: `["a"`, wantErr: `"[\"a\"" is not a JSON array of strings: unexpected end of JSON input`},
		"an object as JSON":                 {spec: objectParam, text: `{"repo": "example.org/app", "tag": "v1"}`, want: *v1.NewObjectValue(map[string]string{"repo": "example.org/app", "tag": "v1"})},
		"an object as KEY=VALUE pairs":      {spec: objectParam, text: "repo=example.org/app,tag=v1", want: *v1.NewObjectValue(map[string]string{"repo": "example.org/app", "tag": "v1"})},
		"a value holding =":                 {spec: objectParam, text: "repo=a=b,tag=", want: *v1.NewObjectValue(map[string]string{"repo": "a=b", "tag": ""})},
		"an object missing a key":           {spec: objectParam, text: "repo=example.org/app", wantErr: "it lacks the keys the param declares: tag"},
		"a key not declared, let be":        {spec: objectParam, text: `{"repo":"r","tag":"t","arch":"arm64"}`, want: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t", "arch": "arm64"})},
		"a key given twice":                 {spec: objectParam, text: "repo=a,repo=b", wantErr: `key "repo" is given twice`},
		"a pair without =":                  {spec: objectParam, text: "repo", wantErr: `"repo" is not KEY=VALUE`},
		"an object of objects":              {spec: objectParam, text: `{"repo":{}}`, wantErr: `"{\"repo\":{}}" is not a JSON object of strings: a JSON object where a string goes`},
		"an object with no properties: any": {spec: freeObject, text: "team=web", want: *v1.NewObjectValue(map[string]string{"team": "web"})},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.spec, tc.text)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTextParsesBack checks that what describe and the dashboard show of a
// value reads back as the same value, so that a user may copy it into -p.
func TestTextParsesBack(t *testing.T) {
	tests := map[string]struct {
		spec  v1.ParamSpec
		value *v1.ParamValue
		text  string
	}{
		"a string":           {stringParam, v1.NewStringValue("a, b"), "a, b"},
		"an array":           {arrayParam, v1.NewArrayValue("a,b", "c"), `["a,b","c"]`},
		"an empty array":     {arrayParam, v1.NewArrayValue(), "[]"},
		"markup, as it is":   {arrayParam, v1.NewArrayValue("<b>&", `"q"`), `["<b>&","\"q\""]`},
		"an object":          {objectParam, v1.NewObjectValue(map[string]string{"tag": "1", "repo": "r"}), `{"repo":"r","tag":"1"}`},
		"a zero value: text": {stringParam, &v1.ParamValue{}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			text := Text(*tc.value)
			if diff := cmp.Diff(tc.text, text); diff != "" {
				t.Fatalf("Text (-want +got):\n%s", diff)
			}
			back, err := Parse(tc.spec, text)
			if err != nil {
				t.Fatal(err)
			}
			want := *tc.value
			want.Type = tc.spec.TypeOrDefault()
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("parsed back (-want +got):\n%s", diff)
			}
		})
	}
}
