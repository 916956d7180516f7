package conversion

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// testRelease7ObjectsThroughAPIServer: random v1 objects with release 7's
// fields, stored as release 7 stores them (straight into etcd here, since
// release 6 refuses them at admission), read through each spoke and written
// back unchanged, main resource and status: the API server keeps them
// whole, conversion loses nothing, and the stash guard lets a write keep
// what the object held (a rollback from release 7 to 6).
func testRelease7ObjectsThroughAPIServer(t *testing.T) {
	ns := env.Namespace(t)
	r := newObjectGenerator(apiSeed + 7)
	for i := range apiRoundTrips {
		task := r.v1Task()
		storeAsRelease7(t, "tasks", ns, fmt.Sprintf("task-%d", i), task)
		run := r.v1TaskRun()
		if run.Spec.TaskRef.Name == "" && run.Spec.TaskSpec == nil {
			run.Spec.TaskRef.Name = "t"
		}
		for j := range run.Status.Conditions {
			if run.Status.Conditions[j].LastTransitionTime.IsZero() {
				run.Status.Conditions[j].LastTransitionTime = metav1.Date(2024, 5, 1, 10, 0, 0, 0, metav1.Now().Location())
			}
		}
		storeAsRelease7(t, "taskruns", ns, fmt.Sprintf("run-%d", i), run)

		for _, c := range []struct {
			stored client.Object
			spokes []client.Object
			status bool
		}{
			{task, []client.Object{&v1alpha1.Task{}, &v1beta1.Task{}}, false},
			{run, []client.Object{&v1alpha1.TaskRun{}, &v1beta1.TaskRun{}}, true},
		} {
			before := storedContent(t, c.stored)
			for _, other := range c.spokes {
				mustGet(t, client.ObjectKeyFromObject(c.stored), other)
				if err := env.Client.Update(t.Context(), other); err != nil {
					t.Fatalf("writing %s back unchanged through %T: %v\n%s\nstored: %s", c.stored.GetName(), other, err, jsonOf(t, other), before)
				}
				if c.status {
					if err := env.Client.Status().Update(t.Context(), other); err != nil {
						t.Fatalf("writing %s's status back unchanged through %T: %v", c.stored.GetName(), other, err)
					}
				}
				if after := storedContent(t, c.stored); after != before {
					t.Errorf("%s changed when written back through %T:\nbefore: %s\nafter:  %s", c.stored.GetName(), other, before, after)
				}
			}
		}
	}
}

// storeAsRelease7 puts obj, a v1 object, into etcd as name in ns, and reads
// it back into obj, as the API server has it.
func storeAsRelease7(t *testing.T, resource, ns, name string, obj client.Object) {
	t.Helper()
	forTheAPIServer(obj, ns, name)
	kind := map[string]string{"tasks": "Task", "taskruns": "TaskRun"}[resource]
	obj.GetObjectKind().SetGroupVersionKind(v1.GroupVersion.WithKind(kind))
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	putInEtcd(t, resource, ns, name, string(data))
	mustGet(t, client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// testLargestPinnedRunThroughWatchCaches: the largest run admission
// accepts that gives a taskSpec (SpokeAnnotationsSize within the limit,
// its spec counted twice), once pinned, reads with its whole stash through
// both spokes, from their watch caches (a LIST at resourceVersion 0) as
// from etcd, and converts back to what is stored.
func testLargestPinnedRunThroughWatchCaches(t *testing.T) {
	ns := env.Namespace(t)
	script := strings.Repeat("x", 65000)
	run := &v1.TaskRun{Spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: []v1.Step{
		{Name: "a", Image: "alpine", Script: script},
		{Name: "b", Image: "alpine", Script: script},
	}}}}
	forTheAPIServer(run, ns, "largest")
	size, err := SpokeAnnotationsSize(run)
	if err != nil {
		t.Fatal(err)
	}
	if size > MaxAnnotationsBytes {
		t.Fatalf("the run measures %d bytes of annotations, over the limit: admission would refuse it", size)
	}
	run.Status.TaskSpec = run.Spec.TaskSpec.DeepCopy()
	storeAsRelease7(t, "taskruns", ns, "largest", run)
	before := storedContent(t, run)

	for _, list := range []client.ObjectList{&v1alpha1.TaskRunList{}, &v1beta1.TaskRunList{}} {
		for _, opts := range [][]client.ListOption{
			{client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}}, // the watch cache
			{client.InNamespace(ns)}, // etcd, or the cache, as the API server chooses
		} {
			if err := env.Client.List(t.Context(), list, opts...); err != nil {
				t.Fatalf("listing %T: %v", list, err)
			}
			items, err := apimeta.ExtractList(list)
			if err != nil || len(items) != 1 {
				t.Fatalf("%T: %d items, %v; want the one run", list, len(items), err)
			}
			spoke := items[0].(client.Object)
			annotations := spoke.GetAnnotations()
			if annotations[AnnotationConversionDataOmitted] != "" || annotations[AnnotationConversionData] == "" {
				t.Fatalf("%T: the run reads without its stash: %v", spoke, keysOf(annotations))
			}
			hub := &v1.TaskRun{}
			switch spoke := spoke.(type) {
			case *v1alpha1.TaskRun:
				err = ConvertTaskRunToHub(t.Context(), spoke, hub)
			case *v1beta1.TaskRun:
				err = ConvertBetaTaskRunToHub(t.Context(), spoke, hub)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameOnTheWire(t, run, hub) {
				t.Errorf("%T converts back to another run (-stored +converted):\n%s", spoke, wireDiff(t, run, hub))
			}
		}
	}
	if after := storedContent(t, run); after != before {
		t.Errorf("reading the run changed it")
	}
}

func keysOf(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
