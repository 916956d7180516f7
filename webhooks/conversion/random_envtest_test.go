package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

const (
	// apiRoundTrips is how many random objects of each kind and version go
	// through the API server: each costs a handful of requests.
	apiRoundTrips = 25
	apiSeed       = 20240502
)

// testRandomObjectsThroughAPIServer stores random valid objects through one
// version, writes them back unchanged through the other (conversion both
// ways, and the admission guard for v1alpha1 writes), and checks that what
// is stored has not changed.
func testRandomObjectsThroughAPIServer(t *testing.T) {
	ns := env.Namespace(t)
	r := newObjectGenerator(apiSeed)
	for i := range apiRoundTrips {
		hubRun := r.hubTaskRun()
		roundTrip(t, ns, fmt.Sprintf("hub-run-%d", i), hubRun, &hubRun.Status, &v1alpha1.TaskRun{}, true)
		spokeRun := r.spokeTaskRun()
		roundTrip(t, ns, fmt.Sprintf("spoke-run-%d", i), spokeRun, &spokeRun.Status, &v1beta1.TaskRun{}, true)
		roundTrip(t, ns, fmt.Sprintf("hub-task-%d", i), r.hubTask(), nil, &v1alpha1.Task{}, false)
		roundTrip(t, ns, fmt.Sprintf("spoke-task-%d", i), r.spokeTask(), nil, &v1beta1.Task{}, false)
		// v1, served since release 5: what v1beta1 stores written back
		// through it, and what it writes (no more than release 5 runs)
		// written back through each spoke.
		storedRun := r.hubTaskRun()
		roundTrip(t, ns, fmt.Sprintf("beta-run-v1-%d", i), storedRun, &storedRun.Status, &v1.TaskRun{}, true)
		roundTrip(t, ns, fmt.Sprintf("beta-task-v1-%d", i), r.hubTask(), nil, &v1.Task{}, false)
		v1Run, v1Task := &v1.TaskRun{}, &v1.Task{}
		betaRun, betaTask := r.hubTaskRun(), r.hubTask()
		forTheAPIServer(betaRun, ns, "")
		forTheAPIServer(betaTask, ns, "")
		if err := ConvertBetaTaskRunToHub(context.Background(), betaRun, v1Run); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ns, fmt.Sprintf("v1-run-%d", i), v1Run, &v1Run.Status, pick[client.Object](r, &v1alpha1.TaskRun{}, &v1beta1.TaskRun{}), true)
		if err := ConvertBetaTaskToHub(context.Background(), betaTask, v1Task); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ns, fmt.Sprintf("v1-task-%d", i), v1Task, nil, pick[client.Object](r, &v1alpha1.Task{}, &v1beta1.Task{}), false)
	}
}

// roundTrip creates obj (its status, when status points at it, written
// through the status subresource), reads it as other, writes that back
// unchanged, and checks that obj's version reads as it did before.
func roundTrip(t *testing.T, ns, name string, obj client.Object, status any, other client.Object, hasStatus bool) {
	t.Helper()
	ctx := context.Background()
	forTheAPIServer(obj, ns, name)
	var saved any
	if status != nil {
		saved = reflect.ValueOf(status).Elem().Interface()
		reflect.ValueOf(status).Elem().Set(reflect.Zero(reflect.TypeOf(saved)))
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s: %v\n%s", obj, name, err, jsonOf(t, obj))
	}
	if status != nil && !reflect.ValueOf(saved).IsZero() {
		reflect.ValueOf(status).Elem().Set(reflect.ValueOf(saved))
		if err := env.Client.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %T %s: %v\n%s", obj, name, err, jsonOf(t, obj))
		}
	}
	before := storedContent(t, obj)

	mustGet(t, client.ObjectKeyFromObject(obj), other)
	if err := env.Client.Update(ctx, other); err != nil {
		t.Fatalf("writing %s back unchanged through %T: %v\n%s\nstored: %s", name, other, err, jsonOf(t, other), before)
	}
	if hasStatus {
		if err := env.Client.Status().Update(ctx, other); err != nil {
			t.Fatalf("writing %s's status back unchanged through %T: %v", name, other, err)
		}
	}
	if after := storedContent(t, obj); after != before {
		t.Errorf("%s changed when written back through %T:\nbefore: %s\nafter:  %s", name, other, before, after)
	}
}

// forTheAPIServer makes a generated object one a client may create: in ns,
// named name, without what only the API server sets, and without labels,
// whose values the generator does not keep to label syntax; with the
// steps and taskRef the API requires, and no params a Task does not
// declare. A derived
// condition that took the (now cleared) creation time gets a time of its own.
func forTheAPIServer(obj client.Object, ns, name string) {
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetGeneration(0)
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetDeletionTimestamp(nil)
	obj.SetManagedFields(nil)
	obj.SetFinalizers(nil)
	obj.SetOwnerReferences(nil)
	obj.SetLabels(nil)
	// The generator's text refers to $(params.x) and $(workspaces.source.path),
	// which the Task webhook refuses where the Task declares no such param
	// or workspace.
	undeclared := func(text string) string {
		return strings.NewReplacer("$(params.", "$(param.", "$(workspaces.", "$(workspace.").Replace(text)
	}
	// And it leaves out what the API requires, to test empty objects.
	switch o := obj.(type) {
	case *v1beta1.Task:
		for i := range o.Spec.Steps {
			step := &o.Spec.Steps[i]
			step.Script, step.WorkingDir = undeclared(step.Script), undeclared(step.WorkingDir)
			for j := range step.Command {
				step.Command[j] = undeclared(step.Command[j])
			}
			for j := range step.Args {
				step.Args[j] = undeclared(step.Args[j])
			}
			for j := range step.Env {
				step.Env[j].Value = undeclared(step.Env[j].Value)
			}
		}
		if len(o.Spec.Steps) == 0 {
			// A script step: a Task with results must end with one.
			o.Spec.Steps = []v1beta1.Step{{Name: "s", Image: "alpine", Script: "true"}}
		}
	case *v1alpha1.Task:
		for i := range o.Spec.Steps {
			o.Spec.Steps[i].Script = undeclared(o.Spec.Steps[i].Script)
		}
		if len(o.Spec.Steps) == 0 {
			o.Spec.Steps = []v1alpha1.Step{{Name: "s", Image: "alpine"}}
		}
	case *v1beta1.TaskRun:
		if o.Spec.TaskRef.Name == "" {
			o.Spec.TaskRef.Name = "t"
		}
	case *v1alpha1.TaskRun:
		if o.Spec.TaskRef == "" {
			o.Spec.TaskRef = "t"
		}
	}
	if run, ok := obj.(*v1beta1.TaskRun); ok {
		for i := range run.Status.Conditions {
			if run.Status.Conditions[i].LastTransitionTime.IsZero() {
				run.Status.Conditions[i].LastTransitionTime = metav1.Date(2024, 5, 1, 10, 0, 0, 0, metav1.Now().Location())
			}
		}
	}
}

// storedContent is what obj's version of obj reads as now: its
// annotations, spec and status, as JSON (so timeouts keep their text).
func storedContent(t *testing.T, obj client.Object) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if u.GroupVersionKind().Empty() {
		gvks, _, err := env.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		u.SetGroupVersionKind(gvks[0])
	}
	mustGet(t, client.ObjectKeyFromObject(obj), u)
	// A typed client writes an empty status as {}, whichever the version.
	status := u.Object["status"]
	if m, ok := status.(map[string]any); ok && len(m) == 0 {
		status = nil
	}
	return jsonOf(t, map[string]any{"annotations": u.GetAnnotations(), "spec": u.Object["spec"], "status": status})
}

// testHostileObjectsThroughAPIServer: among random objects, ones that no
// typed decode takes, ones whose stash would not fit, and forged
// annotations. No read fails, and no forgery is stored.
func testHostileObjectsThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	r := newObjectGenerator(apiSeed + 1)
	want := map[string]bool{}
	for i := range 5 {
		run := r.hubTaskRun()
		start := metav1.Date(2024, 5, 1, 10, 0, 0, 0, metav1.Now().Location())
		run.Status.StartTime = &start
		run.TypeMeta = metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "TaskRun"}
		name := fmt.Sprintf("lowercase-%d", i)
		env.PutInEtcd(t, "taskruns", ns, name, []byte(lowercaseTimes(jsonOf(t, run))))
		want[name] = true

		big := oversizedHubRun()
		big.TypeMeta = run.TypeMeta
		name = fmt.Sprintf("oversized-%d", i)
		env.PutInEtcd(t, "taskruns", ns, name, []byte(jsonOf(t, big)))
		want[name] = true
	}
	// (A stash that does not decode, such as tolerationSeconds "soon", is
	// ignored whole: the write is then admitted and stores nothing of it.)
	forgeries := []string{
		`{"v1beta1":{"spec":{"timeout":"-1h","status":"Paused","params":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}}}`,
		`{"v1beta1":{"spec":{"timeout":"-5m"}}}`,
		`{"v1beta1":{"spec":{"status":"Paused"}}}`,
		`{"v1beta1":{"spec":{"params":[{"name":"1a","value":"x"}]}}}`,
		`{"v1beta1":{"status":{"steps":[{"name":"s","state":"Sleeping"}]}}}`,
		`{"v1beta1":{"status":{"conditions":[{"type":"Ready","status":"Maybe","reason":"R","message":"","lastTransitionTime":"2024-05-01T10:00:00Z"}]}}}`,
		`{"v1beta1":{"spec":{"workspaces":[{"name":"w","emptyDir":{},"secret":{"secretName":"s"}}]}}}`,
		`{"v1beta1":{"spec":{"serviceAccountName":"Not_A_Name"}}}`,
		`{"v1beta1":{"spec":{"retries":11}}}`,
		`{"v1beta1":{"spec":{"retryOn":["Sometimes"]}}}`,
		`{"v1beta1":{"spec":{"ttlSecondsAfterFinished":-1}}}`,
		`{"v1beta1":{"status":{"results":[{"name":"digest"}]}}}`,
		// Valid v1beta1 status, but a write to the main resource may not set
		// status, the stash's included.
		`{"v1beta1":{"status":{"results":[{"name":"digest","value":"sha256:forged"}]}}}`,
		`{"v1beta1":{"status":{"attempts":[{"podName":"p","reason":"PodFailed"}]}}}`,
		`{"v1beta1":{"status":{"steps":[{"name":"build","state":"Terminated","exitCode":0}]}}}`,
	}
	for i, forged := range forgeries {
		name := fmt.Sprintf("forged-%d", i)
		run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
		mustCreate(t, run)
		want[name] = true
		before := storedContent(t, run)
		spoke := &v1alpha1.TaskRun{}
		mustGet(t, client.ObjectKeyFromObject(run), spoke)
		metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, AnnotationConversionData, forged)
		if err := env.Client.Update(ctx, spoke); !apierrors.IsInvalid(err) {
			t.Errorf("forged annotation %s: got %v, want the write refused as Invalid", forged, err)
		}
		if after := storedContent(t, run); after != before {
			t.Errorf("forged annotation %s changed the run:\nbefore: %s\nafter:  %s", forged, before, after)
		}
	}

	for _, version := range []string{"v1alpha1", "v1beta1"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("minitask.dev/" + version)
		list.SetKind("TaskRunList")
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing %s TaskRuns: %v", version, err)
		}
		got := map[string]bool{}
		for _, item := range list.Items {
			got[item.GetName()] = true
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("the %s LIST holds %v, want %v", version, got, want)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
