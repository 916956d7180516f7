package conversion

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// TestConfigMapSourceWithNameHasEveryField holds configMapSourceWithName
// to core/v1's ConfigMapVolumeSource: the same JSON names, so that a field
// core/v1 adds is not dropped from conversion's answers.
func TestConfigMapSourceWithNameHasEveryField(t *testing.T) {
	jsonNames := func(typ reflect.Type) []string {
		var names []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				names = append(names, jsonNamesOf(f.Type)...)
				continue
			}
			names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		return names
	}
	want := jsonNames(reflect.TypeOf(corev1.ConfigMapVolumeSource{}))
	if diff := cmp.Diff(want, jsonNames(reflect.TypeOf(configMapSourceWithName{}))); diff != "" {
		t.Errorf("configMapSourceWithName's fields (-core/v1 +ours):\n%s", diff)
	}
}

func jsonNamesOf(typ reflect.Type) []string {
	var names []string
	for i := range typ.NumField() {
		names = append(names, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
	}
	return names
}

// TestAnswersKeepDefaultedNames: a converted run writes an empty configMap
// name and imagePullSecrets name, as the schema defaults them, and every
// other field as before.
func TestAnswersKeepDefaultedNames(t *testing.T) {
	run := &v1.TaskRun{Spec: v1.TaskRunSpec{
		TaskRef: v1.TaskRef{Name: "t"},
		Workspaces: []v1.WorkspaceBinding{
			{Name: "a", ConfigMap: &corev1.ConfigMapVolumeSource{Optional: ptrTo(false), Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}},
			{Name: "b", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
		},
		PodTemplate: &v1.PodTemplate{ImagePullSecrets: []corev1.LocalObjectReference{{}, {Name: "registry"}}},
	}}
	out, err := encodeObject(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"name":"a","configMap":{"name":"","items":[{"key":"k","path":"p"}],"optional":false}}`,
		`{"name":"b","configMap":{"name":"settings"}}`,
		`"imagePullSecrets":[{"name":""},{"name":"registry"}]`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("answer %s lacks %s", out, want)
		}
	}
}

// TestDefaultedNamesAreWhereLooked holds holdsDefaultedNames to the types:
// the types defaultedNameMarshalers write occur in a v1 or v1beta1 TaskRun
// only at the two paths it looks at, so that a run it passes over is written
// the same without the marshalers.
//
// A v1 run's taskSpec and status.taskSpec (release 7's fields) hold more of
// them, in the env and envFrom of its steps, stepTemplate and sidecars,
// embedded in the selectors. Their names need no writing: only v1's schema
// holds a taskSpec, and v1 is stored, so the API server defaults them on
// every read and every v1 write, and no rule ever compares a converted
// taskSpec (a spoke's write is judged by the spoke's rules, in which the
// taskSpec is only the annotation's text).
func TestDefaultedNamesAreWhereLooked(t *testing.T) {
	want := []string{".Spec.Workspaces[].ConfigMap", ".Spec.PodTemplate.ImagePullSecrets[]"}
	for _, run := range []any{v1.TaskRun{}, v1beta1.TaskRun{}} {
		var found []string
		var walk func(typ reflect.Type, path string, seen map[reflect.Type]bool)
		walk = func(typ reflect.Type, path string, seen map[reflect.Type]bool) {
			if path == ".Spec.TaskSpec" || path == ".Status.TaskSpec" {
				return // written as is, above
			}
			switch typ {
			case reflect.TypeFor[corev1.LocalObjectReference](), reflect.TypeFor[corev1.ConfigMapVolumeSource]():
				found = append(found, path)
				return
			}
			if seen[typ] {
				return
			}
			seen[typ] = true
			defer delete(seen, typ)
			switch typ.Kind() {
			case reflect.Pointer:
				walk(typ.Elem(), path, seen)
			case reflect.Slice, reflect.Array:
				walk(typ.Elem(), path+"[]", seen)
			case reflect.Map:
				walk(typ.Elem(), path+"{}", seen)
			case reflect.Struct:
				for i := range typ.NumField() {
					walk(typ.Field(i).Type, path+"."+typ.Field(i).Name, seen)
				}
			}
		}
		walk(reflect.TypeOf(run), "", map[reflect.Type]bool{})
		if diff := cmp.Diff(want, found); diff != "" {
			t.Errorf("%T: where the defaulted names' types are (-looked at +found):\n%s", run, diff)
		}
	}
}
