//go:build e2e

package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestWebhookOutage stops the manager, which serves the conversion and
// validating webhooks, and checks what still works without it: everything
// stored is v1beta1, so v1beta1 reads, TaskRun writes and Task writes that
// leave the spec alone need no webhook, while a Task spec write and a TaskRun
// create that names a serviceAccountName need a validating webhook, and every
// v1alpha1 request the conversion webhook, and all fail saying so. A restarted
// manager serves them all again, with nothing lost.
func TestWebhookOutage(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, "outage")
	m := startManager(t, c)

	legacy := wrappers.V1alpha1Task(ns, "legacy").Step("run", "alpine:3", "echo legacy").Obj()
	create(t, c, wrappers.Task(ns, "hello").Step("say", "alpine:3", "echo hello").Obj(), legacy,
		wrappers.TaskRun(ns, "hello-1", "hello").Obj(), wrappers.V1alpha1TaskRun(ns, "legacy-1", "legacy").Obj())
	waitFinished(t, c, time.Minute, "hello-1", "legacy-1")
	tasksBefore, runsBefore := listV1beta1(t, c)
	checkV1alpha1Lists(t, c, tasksBefore, runsBefore)

	m.stop()
	t.Log("manager stopped")

	// v1beta1 reads need no webhook.
	tasks, runs := listV1beta1(t, c)
	if len(tasks) != len(tasksBefore) || len(runs) != len(runsBefore) {
		t.Errorf("v1beta1 lists %d Tasks and %d TaskRuns during the outage, want %d and %d",
			len(tasks), len(runs), len(tasksBefore), len(runsBefore))
	}
	// Nor do most v1beta1 TaskRun writes: they are stored as v1beta1, and
	// their webhooks' match conditions skip them (the ServiceAccount check
	// sees only creates that name a serviceAccountName, the stash guard
	// only v1alpha1 requests and objects near the size limit). Task writes
	// that leave the spec as it is skip the validating webhook (its match
	// condition), so they work too.
	create(t, c, wrappers.TaskRun(ns, "during-outage", "hello").Obj())
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"outage":"true"}}}`))
	labelled := []client.Object{runsBefore["hello-1"], runsBefore["legacy-1"]}
	for _, name := range slices.Sorted(maps.Keys(tasksBefore)) {
		labelled = append(labelled, tasksBefore[name])
	}
	for _, before := range labelled {
		obj := before.DeepCopyObject().(client.Object)
		if err := c.client.Patch(ctx, obj, label); err != nil {
			t.Errorf("labelling %T %s through v1beta1 during the outage: %v", obj, obj.GetName(), err)
		}
		labels := before.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["outage"] = "true"
		before.SetLabels(labels)
	}
	// Task writes that set a spec, and TaskRun creates that name a
	// serviceAccountName, are checked by a validating webhook, which fails
	// closed: nothing it has not checked is stored, valid as it may be (a
	// run may use a ServiceAccount only if its creator may).
	respec := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"description":"changed during the outage"}}`))
	for what, refused := range map[string]struct {
		webhook string
		write   func() error
	}{
		"creating a v1beta1 Task": {"vtask-v1beta1.minitask.dev", func() error {
			return c.client.Create(ctx, wrappers.Task(ns, "unchecked").Step("say", "alpine:3", "echo hi").Obj())
		}},
		"changing a v1beta1 Task's spec": {"vtask-v1beta1.minitask.dev", func() error {
			return c.client.Patch(ctx, &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}, respec)
		}},
		"creating a v1beta1 TaskRun that names a ServiceAccount": {"vtaskrun-serviceaccount.minitask.dev", func() error {
			return c.client.Create(ctx, wrappers.TaskRun(ns, "unchecked-account", "hello").ServiceAccount("default").Obj())
		}},
	} {
		err := refused.write()
		if err == nil || !strings.Contains(err.Error(), `"`+refused.webhook+`"`) {
			t.Errorf("%s during the outage: got error %v, want one that names the webhook %s", what, err, refused.webhook)
		} else {
			t.Logf("%s during the outage, refused as expected: %v", what, err)
		}
	}
	// Every v1alpha1 read needs the conversion webhook.
	for name, obj := range map[string]client.Object{"legacy-1": &v1alpha1.TaskRun{}, "legacy": &v1alpha1.Task{}} {
		err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if err == nil || !strings.Contains(err.Error(), "conversion webhook") {
			t.Errorf("reading %T %s during the outage: got error %v, want one that names the conversion webhook", obj, name, err)
		} else {
			t.Logf("v1alpha1 read during the outage, failed as expected: %v", err)
		}
	}
	if err := c.client.List(ctx, &v1alpha1.TaskRunList{}, client.InNamespace(ns)); err == nil ||
		!strings.Contains(err.Error(), "conversion webhook") {
		t.Errorf("listing v1alpha1 TaskRuns during the outage: got error %v, want one that names the conversion webhook", err)
	}

	m.start()
	create(t, c, wrappers.Task(ns, "checked").Step("say", "alpine:3", "echo hi").Obj())

	// Everything reads again, in both versions, as it was but for the
	// labels written during the outage; the run created then is executed.
	got := waitFinished(t, c, time.Minute, "during-outage")
	if o := outcome(got["during-outage"]); o != "True/Succeeded" {
		t.Errorf("TaskRun during-outage ended %s, want True/Succeeded", o)
	}
	tasksAfter, runsAfter := listV1beta1(t, c)
	checkV1alpha1Lists(t, c, tasksAfter, runsAfter)
	delete(runsAfter, "during-outage")
	delete(tasksAfter, "checked")
	ignoreWrites := cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "ManagedFields")
	if diff := cmp.Diff(tasksBefore, tasksAfter, ignoreWrites); diff != "" {
		t.Errorf("v1beta1 Tasks after the outage (-before +after, labels written during it expected):\n%s", diff)
	}
	if diff := cmp.Diff(runsBefore, runsAfter, ignoreWrites); diff != "" {
		t.Errorf("v1beta1 TaskRuns after the outage (-before +after, labels written during it expected):\n%s", diff)
	}
}

// listV1beta1 lists the Tasks and TaskRuns in ns through v1beta1, by name.
func listV1beta1(t *testing.T, c *cluster) (map[string]*v1beta1.Task, map[string]*v1beta1.TaskRun) {
	t.Helper()
	var tasks v1beta1.TaskList
	var runs v1beta1.TaskRunList
	for _, list := range []client.ObjectList{&tasks, &runs} {
		if err := c.client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing %T: %v", list, err)
		}
	}
	byNameTasks := map[string]*v1beta1.Task{}
	for i := range tasks.Items {
		byNameTasks[tasks.Items[i].Name] = &tasks.Items[i]
	}
	byNameRuns := map[string]*v1beta1.TaskRun{}
	for i := range runs.Items {
		byNameRuns[runs.Items[i].Name] = &runs.Items[i]
	}
	return byNameTasks, byNameRuns
}

// checkV1alpha1Lists checks that v1alpha1 lists the same objects (by name
// and UID) as v1beta1 did.
func checkV1alpha1Lists(t *testing.T, c *cluster, tasks map[string]*v1beta1.Task, runs map[string]*v1beta1.TaskRun) {
	t.Helper()
	var alphaTasks v1alpha1.TaskList
	var alphaRuns v1alpha1.TaskRunList
	for _, list := range []client.ObjectList{&alphaTasks, &alphaRuns} {
		if err := c.client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing %T: %v", list, err)
		}
	}
	want, got := map[string]types.UID{}, map[string]types.UID{}
	for name, task := range tasks {
		want["Task/"+name] = task.UID
	}
	for name, run := range runs {
		want["TaskRun/"+name] = run.UID
	}
	for _, task := range alphaTasks.Items {
		got["Task/"+task.Name] = task.UID
	}
	for _, run := range alphaRuns.Items {
		got["TaskRun/"+run.Name] = run.UID
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects listed through v1alpha1 (-v1beta1 +v1alpha1):\n%s", diff)
	}
}
