package stashguard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The guard's tests of v1 writes, run by TestThroughAPIServer: v1 is
// served and converts both ways, and what only v1 can express (array and
// object params, timeouts.pending), which release 5 refused, is accepted
// in every version and reads back without loss through each.

// testV1WritesReadInEveryVersion: a v1 Task and run of what release 5 can
// run are stored, and read back through each version as written.
func testV1WritesReadInEveryVersion(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "greet", Namespace: ns}, Spec: v1.TaskSpec{
		Params: []v1.ParamSpec{{Name: "greeting", Type: v1.ParamTypeString, Default: v1.NewStringValue("hello")}},
		Steps:  []v1.Step{{Name: "say", Image: "alpine:3", Script: "echo hi"}}}}
	run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "greet-run", Namespace: ns}, Spec: v1.TaskRunSpec{
		TaskRef:  v1.TaskRef{Name: "greet"},
		Params:   []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
		Timeouts: v1.Timeouts{Total: v1.NewDuration(10 * time.Minute)}}}
	for _, obj := range []client.Object{task, run} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s through v1: %v", obj.GetName(), err)
		}
	}

	var beta v1beta1.TaskRun
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &beta); err != nil {
		t.Fatal(err)
	}
	if got := beta.Spec.Timeout.String(); got != "10m0s" {
		t.Errorf("v1beta1 timeout %q, want 10m0s", got)
	}
	if diff := cmp.Diff([]v1beta1.Param{{Name: "greeting", Value: "hi"}}, beta.Spec.Params); diff != "" {
		t.Errorf("v1beta1 params (-want +got):\n%s", diff)
	}
	if _, ok := beta.Annotations[conversion.AnnotationConversionData]; ok {
		t.Errorf("the v1beta1 form carries a stash: %v", beta.Annotations)
	}
	var alpha v1alpha1.Task
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(task), &alpha); err != nil {
		t.Fatal(err)
	}
	var back v1.Task
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(task), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(task.Spec, back.Spec); diff != "" {
		t.Errorf("v1 Task read back (-written +read):\n%s", diff)
	}
}

// testV1OnlyFieldsAreAccepted: an array or object param, or
// timeouts.pending, is accepted whichever version carries it (a spoke in
// its conversion annotation), and reads back through every version, and
// through a write of each spoke, as v1 stored it. Text that is not of the
// type the annotation gives it is still refused, never dropped.
func testV1OnlyFieldsAreAccepted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	step := []v1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}
	withStash := func(name, stash string) metav1.ObjectMeta {
		m := meta(name)
		m.Annotations = map[string]string{conversion.AnnotationConversionData: stash}
		return m
	}
	tests := map[string]struct {
		obj client.Object
		// v1 is the object read back through v1, Task or TaskRun.
		v1 client.Object
	}{
		"v1 array param": {obj: &v1.Task{ObjectMeta: meta("array"), Spec: v1.TaskSpec{Steps: step,
			Params: []v1.ParamSpec{{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewArrayValue("a.go")}}}},
			v1: &v1.Task{}},
		"v1 object param": {obj: &v1.Task{ObjectMeta: meta("object"), Spec: v1.TaskSpec{Steps: step,
			Params: []v1.ParamSpec{{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}}}}}},
			v1: &v1.Task{}},
		"v1 pending timeout": {obj: &v1.TaskRun{ObjectMeta: meta("pending"), Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"},
			Timeouts: v1.Timeouts{Pending: v1.NewDuration(time.Minute)}}},
			v1: &v1.TaskRun{}},
		"v1 array value": {obj: &v1.TaskRun{ObjectMeta: meta("value"), Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"},
			Params: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a.go")}}}},
			v1: &v1.TaskRun{}},
		"v1beta1 with a stashed array type": {obj: &v1beta1.Task{
			ObjectMeta: withStash("beta", `{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`),
			Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptrTo(`["a.go"]`)}},
				Steps: []v1beta1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}}},
			v1: &v1.Task{}},
		"v1beta1 run with a stashed pending timeout": {obj: &v1beta1.TaskRun{
			ObjectMeta: withStash("beta-run", `{"v1":{"spec":{"pending":"5m"}}}`),
			Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}},
			v1: &v1.TaskRun{}},
		"v1alpha1 with a stashed object param": {obj: &v1alpha1.Task{
			ObjectMeta: withStash("alpha",
				`{"v1beta1":{"spec":{"params":[{"name":"image","default":"{\"repo\":\"r\"}"}]}},"v1":{"spec":{"params":[{"name":"image","type":"object","properties":{"repo":{}}}]}}}`),
			Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "lint", Image: "golang:1.26"}}}},
			v1: &v1.Task{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := env.Client.Create(ctx, tc.obj); err != nil {
				t.Fatalf("refused: %v", err)
			}
			key := client.ObjectKeyFromObject(tc.obj)
			if err := env.Client.Get(ctx, key, tc.v1); err != nil {
				t.Fatalf("reading through v1: %v", err)
			}
			want := specOf(t, tc.v1)
			if want == "{}" || !strings.Contains(want, `"type":`) && !strings.Contains(want, `"pending":`) && !strings.Contains(want, `["a.go"]`) {
				t.Errorf("v1 spec %s lacks what only v1 expresses", want)
			}
			spokes := map[string]client.Object{"v1beta1": &v1beta1.Task{}, "v1alpha1": &v1alpha1.Task{}}
			if _, ok := tc.v1.(*v1.TaskRun); ok {
				spokes = map[string]client.Object{"v1beta1": &v1beta1.TaskRun{}, "v1alpha1": &v1alpha1.TaskRun{}}
			}
			for version, spoke := range spokes {
				// Read through the spoke, write it back as read (a label
				// makes it a write), and read through v1 again.
				if err := env.Client.Get(ctx, key, spoke); err != nil {
					t.Fatalf("reading through %s: %v", version, err)
				}
				spoke.SetLabels(map[string]string{"written-through": version})
				if err := env.Client.Update(ctx, spoke); err != nil {
					t.Fatalf("writing back through %s: %v", version, err)
				}
				back := tc.v1.DeepCopyObject().(client.Object)
				if err := env.Client.Get(ctx, key, back); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, specOf(t, back)); diff != "" {
					t.Errorf("v1 spec after a %s round trip (-before +after):\n%s", version, diff)
				}
			}
		})
	}

	// Text that is not of the type the annotation gives it is refused,
	// naming the default.
	bad := &v1beta1.Task{
		ObjectMeta: withStash("beta-text", `{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`),
		Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptrTo(`a.go`)}},
			Steps: []v1beta1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}}}
	err := env.Client.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "spec.params[0].default") {
		t.Errorf("a v1beta1 default not of its stashed type: got %v, want a refusal naming spec.params[0].default", err)
	}
}

// specOf is the JSON of obj's spec, a v1 Task's or TaskRun's.
func specOf(t *testing.T, obj client.Object) string {
	t.Helper()
	var spec any
	switch obj := obj.(type) {
	case *v1.Task:
		spec = obj.Spec
	case *v1.TaskRun:
		spec = obj.Spec
	default:
		t.Fatalf("specOf(%T)", obj)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func ptrTo[T any](v T) *T { return &v }
