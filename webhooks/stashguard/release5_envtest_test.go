package stashguard_test

import (
	"context"
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

// The guard's tests of release 5, run by TestThroughAPIServer: v1 is
// served and converts both ways, and what only release 6 can run is
// refused in every version, naming the field and release 6.

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

// testRelease6FieldsAreRefused: an array or object param, or
// timeouts.pending, is refused whichever version carries it.
func testRelease6FieldsAreRefused(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	step := []v1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}
	withStash := func(stash string) map[string]string {
		return map[string]string{conversion.AnnotationConversionData: stash}
	}
	tests := map[string]struct {
		obj   client.Object
		field string
	}{
		"v1 array param": {obj: &v1.Task{ObjectMeta: meta("array"), Spec: v1.TaskSpec{Steps: step,
			Params: []v1.ParamSpec{{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewArrayValue("a.go")}}}},
			field: "spec.params[0].type"},
		"v1 object param": {obj: &v1.Task{ObjectMeta: meta("object"), Spec: v1.TaskSpec{Steps: step,
			Params: []v1.ParamSpec{{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}}}}}},
			field: "spec.params[0].type"},
		"v1 pending timeout": {obj: &v1.TaskRun{ObjectMeta: meta("pending"), Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"},
			Timeouts: v1.Timeouts{Pending: v1.NewDuration(time.Minute)}}},
			field: "spec.timeouts.pending"},
		"v1 array value": {obj: &v1.TaskRun{ObjectMeta: meta("value"), Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"},
			Params: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a.go")}}}},
			field: "spec.params[0].value"},
		"v1beta1 with a stashed array type": {obj: &v1beta1.Task{
			ObjectMeta: metav1.ObjectMeta{Name: "beta", Namespace: ns, Annotations: withStash(`{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`)},
			Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptrTo(`["a.go"]`)}},
				Steps: []v1beta1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}}},
			field: "spec.params[0].type"},
		"v1beta1 text not of its stashed type": {obj: &v1beta1.Task{
			ObjectMeta: metav1.ObjectMeta{Name: "beta-text", Namespace: ns, Annotations: withStash(`{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`)},
			Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptrTo(`a.go`)}},
				Steps: []v1beta1.Step{{Name: "lint", Image: "golang:1.26", Script: "true"}}}},
			field: "spec.params[0].default"},
		"v1beta1 run with a stashed pending timeout": {obj: &v1beta1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Name: "beta-run", Namespace: ns, Annotations: withStash(`{"v1":{"spec":{"pending":"5m"}}}`)},
			Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}},
			field: "spec.timeouts.pending"},
		"v1alpha1 with a stashed object param": {obj: &v1alpha1.Task{
			ObjectMeta: metav1.ObjectMeta{Name: "alpha", Namespace: ns, Annotations: withStash(
				`{"v1beta1":{"spec":{"params":[{"name":"image","default":"{\"repo\":\"r\"}"}]}},"v1":{"spec":{"params":[{"name":"image","type":"object","properties":{"repo":{}}}]}}}`)},
			Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "lint", Image: "golang:1.26"}}}},
			field: "spec.params[0].type"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj)
			if err == nil {
				t.Fatalf("created; want a refusal naming %s", tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("refusal %q does not name %s", err, tc.field)
			}
			if tc.field != "spec.params[0].default" && !strings.Contains(err.Error(), "release 6") {
				t.Errorf("refusal %q does not say it needs release 6", err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
