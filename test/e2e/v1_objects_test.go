//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what the rehearsals of release 5 write through v1 and
// what they check of every object through it: its v1 view must be its
// v1beta1 view (what is stored) but for the differences of shape API.md
// names ("Releases 5 and 6"), and every object must read, in the version
// it was written through, as it was written.

// The objects written through v1 once release 5 runs (writeV1Objects).
const (
	v1Greet = "v1-greet" // kubectl apply --server-side, then a label by an update
	v1Done  = "v1-done"  // kubectl apply --server-side; succeeds
)

// v1GreetTask is greetTask written through v1: string params, one of them
// said to be a string, as config/samples/v1_task.yaml does (v1beta1 cannot
// say so: the conversion annotation of the stored object holds it).
func v1GreetTask(name string) *minitaskv1.Task {
	return &minitaskv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: minitaskv1.TaskSpec{
			Description: "Greets someone, written through v1",
			Params: []minitaskv1.ParamSpec{
				{Name: "greeting", Type: minitaskv1.ParamTypeString, Description: "What to say", Default: minitaskv1.NewStringValue("hello")},
				{Name: "name", Description: "Whom to greet"},
				{Name: "pause", Default: minitaskv1.NewStringValue("1")},
			},
			Steps: []minitaskv1.Step{
				{Name: "say", Image: "alpine:3", Script: `echo "$(params.greeting), $(params.name)!"`},
				{Name: "wait", Image: "alpine:3", Script: "sleep $(params.pause)"},
			},
		},
	}
}

// v1GreetRun is a v1 run of Task task with the given name and pause, and
// timeouts.total written as total (text, as a user writes it: v1 keeps it).
func v1GreetRun(name, task, who string, pause int, total string) *minitaskv1.TaskRun {
	var d minitaskv1.Duration
	if err := json.Unmarshal([]byte(`"`+total+`"`), &d); err != nil {
		panic(fmt.Sprintf("timeouts.total %q: %v", total, err))
	}
	return &minitaskv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: minitaskv1.TaskRunSpec{
			TaskRef: minitaskv1.TaskRef{Name: task},
			Params: []minitaskv1.Param{
				{Name: "name", Value: *minitaskv1.NewStringValue(who)},
				{Name: "pause", Value: *minitaskv1.NewStringValue(fmt.Sprint(pause))},
			},
			Timeouts: minitaskv1.Timeouts{Total: &d},
		},
	}
}

// writeV1Objects writes a Task and a run of it through v1, each with
// kubectl apply --server-side, then labels the Task with an update through
// v1. The run must succeed.
func (r *v1Rehearsal) writeV1Objects() {
	r.apply(serverSide, v1GreetTask(v1Greet), v1GreetRun(v1Done, v1Greet, "vi", 1, "10m"))
	r.update(&minitaskv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1Greet}}, func(obj client.Object) {
		obj.SetLabels(map[string]string{"written-through": "v1"})
	})
	r.wantPods[v1Done] = []string{runstate.PodName(runNamed(v1Done))}
	if got := waitFinished(r.t, r.c, time.Minute, v1Done); outcome(got[v1Done]) != "True/Succeeded" {
		r.t.Errorf("TaskRun %s, written through v1, ended %s (%s), want True/Succeeded",
			v1Done, outcome(got[v1Done]), runstate.Summary(got[v1Done]))
	}
}

// checkRefusedForRelease6 applies v1 Tasks with what only release 6 can
// run: kubectl must fail, naming the field and release 6, and nothing be
// created. API.md's own example uses the params in its steps, which
// release 5's validating webhook of v1beta1 Tasks also judges (converted,
// the references $(params.files[*]) and $(params.image.repo)); the API
// server calls both webhooks at once and reports the first refusal to come
// back, so that one is applied several times: each must name release 6.
func (r *v1Rehearsal) checkRefusedForRelease6() {
	task := func(name string, params []any, step map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": minitaskv1.GroupVersion.String(), "kind": "Task",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"params": params, "steps": []any{step}},
		}
	}
	array := map[string]any{"name": "files", "type": "array", "default": []any{"a.go", "b.go"}}
	object := map[string]any{"name": "image", "type": "object", "properties": map[string]any{"repo": map[string]any{}, "tag": map[string]any{}},
		"default": map[string]any{"repo": "example.org/app", "tag": "latest"}}
	cases := []struct {
		task  map[string]any
		tries int
	}{
		{task("v1-array", []any{array}, map[string]any{"name": "lint", "image": "golang:1.26", "command": []any{"gofmt", "-l", "."}}), 1},
		{task("v1-api-example", []any{array, object}, map[string]any{"name": "lint", "image": "golang:1.26",
			"command": []any{"gofmt", "-l"}, "args": []any{"$(params.files[*])"},
			"env": []any{map[string]any{"name": "REPO", "value": "$(params.image.repo)"}}}), 8},
	}
	got, want := map[string][]string{}, map[string][]string{}
	for _, c := range cases {
		name := field(c.task, "metadata", "name").(string)
		path := r.manifestFile(name+".yaml", c.task)
		for range c.tries {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			out, err := r.c.runKubectl(ctx, "apply", "--server-side", "-f", path)
			cancel()
			refusal := "applied: " + out
			switch {
			case err != nil && strings.Contains(out, "spec.params[0].type") && strings.Contains(out, "release 6"):
				refusal = "refused, naming spec.params[0].type and release 6"
			case err != nil:
				refusal = "refused otherwise: " + out
			}
			got[name] = append(got[name], refusal)
			want[name] = append(want[name], "refused, naming spec.params[0].type and release 6")
		}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &minitaskv1.Task{}); !apierrors.IsNotFound(err) {
			r.t.Errorf("Task %s after its refusal: got %v, want not found", name, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Errorf("kubectl apply --server-side of v1 Tasks with array and object params, each try (-want +got):\n%s", diff)
	}
}

// checkV1Views lists every object through v1 and v1beta1: each must read
// through v1 as its v1beta1 view, but for the shapes that differ (API.md,
// "Releases 5 and 6"): timeout is timeouts.total, and what v1beta1 cannot
// say of v1 (a param said to be a string) rides in the conversion
// annotation of the v1beta1 view. Nothing else may differ, status and
// metadata included. Nothing may write in between: the runs have finished.
func (r *v1Rehearsal) checkV1Views(when string) {
	beta := r.readVersions(false, true)
	var tasks minitaskv1.TaskList
	var runs minitaskv1.TaskRunList
	for _, l := range []client.ObjectList{&tasks, &runs} {
		if err := r.c.client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			r.t.Fatalf("listing %T: %v", l, err)
		}
	}
	compareV1(r, "Task", beta.betaTasks, byName(tasks.Items), when)
	compareV1(r, "TaskRun", beta.betaRuns, byName(runs.Items), when)
	r.v1Checked += len(tasks.Items) + len(runs.Items)
}

// compareV1 compares each object's v1 view with its v1beta1 view, as JSON.
func compareV1[B, V any](r *v1Rehearsal, kind string, beta map[string]*B, v1 map[string]*V, when string) {
	r.t.Helper()
	names := slices.Sorted(maps.Keys(beta))
	if got := slices.Sorted(maps.Keys(v1)); !slices.Equal(names, got) {
		r.t.Errorf("%ss %s: %v through v1beta1, %v through v1", kind, when, names, got)
	}
	for _, name := range names {
		if v1[name] == nil {
			continue
		}
		want, got := v1FromBeta(jsonMap(r.t, beta[name])), withoutStringTypes(jsonMap(r.t, v1[name]))
		if diff := cmp.Diff(want, got); diff != "" {
			r.t.Errorf("v1 view of %s %s %s, against its v1beta1 view (-v1beta1, in v1's shape +v1):\n%s", kind, name, when, diff)
		}
	}
}

// v1FromBeta is the JSON of a v1beta1 object in v1's shape: spec.timeout
// is spec.timeouts.total, a run's pinned spec (release 7's
// status.taskSpec) is the one its conversion annotation holds, and the
// annotation, which holds what only v1 says, is not there. apiVersion and
// kind, which lists fill in, are left out.
func v1FromBeta(obj map[string]any) map[string]any {
	delete(obj, "apiVersion")
	delete(obj, "kind")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			if pinned := pinnedSpecOf(annotations[conversionDataAnnotation]); pinned != nil {
				if status, ok := obj["status"].(map[string]any); ok {
					status["taskSpec"] = pinned
				}
			}
			delete(annotations, conversionDataAnnotation)
			if len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	if spec, ok := obj["spec"].(map[string]any); ok {
		if timeout, ok := spec["timeout"]; ok {
			spec["timeouts"] = map[string]any{"total": timeout}
			delete(spec, "timeout")
		}
	}
	return obj
}

// withoutStringTypes is a v1 object's JSON without apiVersion and kind, and
// without the type of its params said to be strings, which v1beta1 keeps
// in the conversion annotation (checkWritten holds v1 objects to it).
func withoutStringTypes(obj map[string]any) map[string]any {
	delete(obj, "apiVersion")
	delete(obj, "kind")
	spec, _ := obj["spec"].(map[string]any)
	params, _ := spec["params"].([]any)
	for _, p := range params {
		if p, ok := p.(map[string]any); ok && p["type"] == string(minitaskv1.ParamTypeString) {
			delete(p, "type")
		}
	}
	return obj
}

// jsonMap is obj's JSON decoded into a map.
func jsonMap(t testing.TB, obj any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// manifestOf is obj as a user writes it to apply it: apiVersion and kind
// (of obj's Go type), name, namespace, labels, annotations and spec.
func (r *v1Rehearsal) manifestOf(obj client.Object) map[string]any {
	gvk, err := apiutil.GVKForObject(obj, r.c.client.Scheme())
	if err != nil {
		r.t.Fatal(err)
	}
	meta := map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()}
	if labels := obj.GetLabels(); len(labels) > 0 {
		meta["labels"] = labels
	}
	if annotations := obj.GetAnnotations(); len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": meta, "spec": jsonMap(r.t, obj)["spec"]}
}

// How apply writes: kubectl apply's two kinds.
const (
	serverSide = "server-side"
	clientSide = "client-side"
)

// apply writes objs with kubectl apply, server-side or client-side, each
// through the version of its Go type, and records them as written.
func (r *v1Rehearsal) apply(how string, objs ...client.Object) {
	manifests := make([]map[string]any, len(objs))
	for i, obj := range objs {
		manifests[i] = r.manifestOf(obj)
		r.wrote(obj)
	}
	args := []string{"apply", "-f", r.manifestFile(fmt.Sprintf("%s-%d.yaml", how, len(r.written)), manifests...)}
	if how == serverSide {
		args = append(args, "--server-side")
	}
	r.kubectl(args...)
}

// createObjects creates objs with a client, each through the version of its
// Go type, and records them as written.
func (r *v1Rehearsal) createObjects(objs ...client.Object) {
	for _, obj := range objs {
		r.wrote(obj.DeepCopyObject().(client.Object))
	}
	create(r.t, r.c, objs...)
}

// update writes obj, with a client's update (a PUT) through the version of
// its Go type: it reads the object, lets change change it, and writes it
// back, again should another writer (the controller) come in between. What
// it wrote is recorded as written, in that version, for checkWritten.
func (r *v1Rehearsal) update(obj client.Object, change func(client.Object)) {
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return r.c.client.Update(ctx, obj)
	})
	if err != nil {
		r.t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
	r.wrote(obj)
}

// wrote records obj as written through the version of its Go type.
func (r *v1Rehearsal) wrote(obj client.Object) {
	r.written[kindOf(obj)+"/"+obj.GetName()] = obj.DeepCopyObject().(client.Object)
}

// checkWritten reads each object written (apply, createObjects, update)
// through the version it was written through: its spec, labels and
// annotations must be what was last written, but for the annotations that
// conversion and kubectl apply add.
func (r *v1Rehearsal) checkWritten(when string) {
	for _, key := range slices.Sorted(maps.Keys(r.written)) {
		want := r.written[key]
		got := want.DeepCopyObject().(client.Object)
		if err := r.c.client.Get(context.Background(), client.ObjectKeyFromObject(want), got); err != nil {
			r.t.Errorf("reading %s %s: %v", key, when, err)
			continue
		}
		if diff := cmp.Diff(writtenFields(r, want), writtenFields(r, got), cmpopts.EquateEmpty()); diff != "" {
			r.t.Errorf("%s (%T) %s, against what was written through its version (-written +read):\n%s", key, got, when, diff)
		}
	}
}

// writtenFields are obj's spec, labels, and annotations but conversion's
// and kubectl apply's, as JSON.
func writtenFields(r *v1Rehearsal, obj client.Object) map[string]any {
	annotations := maps.Clone(obj.GetAnnotations())
	delete(annotations, conversionDataAnnotation)
	delete(annotations, lastAppliedAnnotation)
	return map[string]any{"spec": jsonMap(r.t, obj)["spec"], "labels": obj.GetLabels(), "annotations": annotations}
}

// lastAppliedAnnotation is where kubectl apply (client-side) keeps what it
// applied last.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// pinnedSpecOf is the status.taskSpec that a conversion annotation's v1
// member holds, nil for none.
func pinnedSpecOf(annotation any) any {
	text, ok := annotation.(string)
	if !ok {
		return nil
	}
	var data struct {
		V1 struct {
			Status struct {
				TaskSpec any `json:"taskSpec"`
			} `json:"status"`
		} `json:"v1"`
	}
	if json.Unmarshal([]byte(text), &data) != nil {
		return nil
	}
	return data.V1.Status.TaskSpec
}
