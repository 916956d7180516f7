package conversion

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSameShapeTypesAreIdentical holds every pair sameShape reinterprets to
// the same layout: the same fields in the same order, each of the same Go
// type or, for the API's own types, of a pair that is itself identical,
// with the same JSON tags. A field added to one version only fails it.
func TestSameShapeTypesAreIdentical(t *testing.T) {
	for _, pair := range sameShapePairs {
		a, b := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		t.Run(a.Name(), func(t *testing.T) {
			if err := identicalTypes(a, b, a.Name()); err != "" {
				t.Error(err)
			}
		})
	}
}

// identicalTypes says how a and b differ, or "" when their layouts and
// JSON are the same. Types of different packages must have the same name
// and kind, and are compared member by member.
func identicalTypes(a, b reflect.Type, path string) string {
	if a == b {
		return ""
	}
	if a.Kind() != b.Kind() || a.Name() != b.Name() || a.Size() != b.Size() {
		return path + ": " + a.String() + " and " + b.String() + " differ"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice:
		return identicalTypes(a.Elem(), b.Elem(), path+"[]")
	case reflect.Map:
		if msg := identicalTypes(a.Key(), b.Key(), path+"{key}"); msg != "" {
			return msg
		}
		return identicalTypes(a.Elem(), b.Elem(), path+"{}")
	case reflect.Struct:
		if a.NumField() != b.NumField() {
			return path + ": a different number of fields"
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Tag != fb.Tag || fa.Offset != fb.Offset {
				return path + "." + fa.Name + ": its name, tag or place differ (" + fb.Name + ")"
			}
			if msg := identicalTypes(fa.Type, fb.Type, path+"."+fa.Name); msg != "" {
				return msg
			}
		}
		return ""
	case reflect.String, reflect.Bool, reflect.Int32, reflect.Int64:
		return "" // named basic types of the same name and kind: OnError, ...
	default:
		return path + ": " + a.String() + " is of a kind the test does not compare"
	}
}

// TestStashReadTypesAreIdentical holds the types a v1alpha1 TaskRun's
// stash is read into to the v1 types they are reinterpreted as: the same
// fields in the same places, with the same JSON, stashTime standing for
// metav1.Time.
func TestStashReadTypesAreIdentical(t *testing.T) {
	stashTimeType, timeType := reflect.TypeFor[stashTime](), reflect.TypeFor[metav1.Time]()
	var same func(a, b reflect.Type, path string) string
	same = func(a, b reflect.Type, path string) string {
		switch {
		case a == b, a == stashTimeType && b == timeType && a.Size() == b.Size():
			return ""
		case a.Kind() != b.Kind() || a.Size() != b.Size():
			return path + ": " + a.String() + " and " + b.String() + " differ"
		case a.Kind() == reflect.Pointer:
			return same(a.Elem(), b.Elem(), path)
		case a.Kind() != reflect.Struct || a.NumField() != b.NumField():
			return path + ": " + a.String() + " and " + b.String() + " differ"
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Tag.Get("json") != fb.Tag.Get("json") || fa.Offset != fb.Offset || fa.Anonymous != fb.Anonymous {
				return path + "." + fa.Name + ": its name, JSON tag or place differ (" + fb.Name + ")"
			}
			if msg := same(fa.Type, fb.Type, path+"."+fa.Name); msg != "" {
				return msg
			}
		}
		return ""
	}
	for _, pair := range stashReadPairs {
		a, b := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		if a == stashTimeType {
			if msg := identicalTypes(reflect.StructOf([]reflect.StructField{{Name: "T", Type: a.Field(0).Type}}),
				reflect.StructOf([]reflect.StructField{{Name: "T", Type: b.Field(0).Type}}), "stashTime"); msg != "" || a.NumField() != 1 || b.NumField() != 1 {
				t.Errorf("stashTime is not metav1.Time's layout: %s", msg)
			}
			continue
		}
		if msg := same(a, b, a.Name()); msg != "" {
			t.Error(msg)
		}
	}
}
