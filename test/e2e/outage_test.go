//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestWebhookOutage stops the manager, which serves the conversion and
// validating webhooks, and checks what still works without it. Release 6
// stores v1, so v1 reads need no webhook; every v1alpha1 and v1beta1
// request needs the conversion webhook (v1beta1 is no longer stored), and
// every v1 write the stash guard, which judges each for what only release 6
// runs: all fail, naming the webhook, but for LISTs, which the API
// server's watch caches serve as they were before the outage. (Until
// release 6, v1beta1 reads and most v1beta1 writes needed no webhook.) A
// restarted manager serves them all again, with nothing lost.
func TestWebhookOutage(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, "outage")
	m := startManager(t, c)

	legacy := wrappers.V1alpha1Task(ns, "legacy").Step("run", "alpine:3", "echo legacy").Obj()
	create(t, c, wrappers.V1beta1Task(wrappers.Task(ns, "hello").Step("say", "alpine:3", "echo hello").Obj()), legacy,
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, "hello-1", "hello").Obj()), wrappers.V1alpha1TaskRun(ns, "legacy-1", "legacy").Obj())
	waitFinished(t, c, time.Minute, "hello-1", "legacy-1")
	checkStorageMigrated(t, c, currentStorage)
	tasksBefore, runsBefore := listV1beta1(t, c)
	checkV1alpha1Lists(t, c, tasksBefore, runsBefore)
	var v1Tasks minitaskv1.TaskList
	var v1Runs minitaskv1.TaskRunList

	m.stop()
	t.Log("manager stopped")

	// v1 reads need no webhook: v1 is stored.
	for _, list := range []client.ObjectList{&v1Tasks, &v1Runs} {
		if err := c.client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Errorf("listing %T during the outage: %v", list, err)
		}
	}
	if len(v1Tasks.Items) != len(tasksBefore) || len(v1Runs.Items) != len(runsBefore) {
		t.Errorf("v1 lists %d Tasks and %d TaskRuns during the outage, want %d and %d",
			len(v1Tasks.Items), len(v1Runs.Items), len(tasksBefore), len(runsBefore))
	}
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"outage":"true"}}}`))
	respec := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"description":"changed during the outage"}}`))
	// A v1beta1 write is converted to v1 to be stored. The stash guard
	// judges every v1 write for what only release 6 runs; a v1 create of a
	// TaskRun, and a v1 write of a Task, are also converted to v1beta1 for
	// the validating webhooks of v1beta1 (matchPolicy Equivalent), whose
	// match conditions read that form: whichever fails first is reported.
	for what, refused := range map[string]struct {
		webhooks []string
		write    func() error
	}{
		"creating a v1beta1 TaskRun": {[]string{"conversion webhook"}, func() error {
			return c.client.Create(ctx, wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, "unconverted", "hello").Obj()))
		}},
		"labelling a v1beta1 TaskRun": {[]string{"conversion webhook"}, func() error {
			return c.client.Patch(ctx, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-1"}}, label)
		}},
		"changing a v1beta1 Task's spec": {[]string{"conversion webhook"}, func() error {
			return c.client.Patch(ctx, &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}, respec)
		}},
		"creating a v1 TaskRun": {[]string{`"vtaskrun-stash.minitask.dev"`, "conversion webhook"}, func() error {
			return c.client.Create(ctx, &minitaskv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unchecked"},
				Spec: minitaskv1.TaskRunSpec{TaskRef: minitaskv1.TaskRef{Name: "hello"}}})
		}},
		"labelling a v1 TaskRun": {[]string{`"vtaskrun-stash.minitask.dev"`}, func() error {
			return c.client.Patch(ctx, &minitaskv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-1"}}, label)
		}},
		"labelling a v1 Task": {[]string{`"vtask-stash.minitask.dev"`, "conversion webhook"}, func() error {
			return c.client.Patch(ctx, &minitaskv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}, label)
		}},
	} {
		err := refused.write()
		if err == nil || !slices.ContainsFunc(refused.webhooks, func(w string) bool { return strings.Contains(err.Error(), w) }) {
			t.Errorf("%s during the outage: got error %v, want one that names one of %q", what, err, refused.webhooks)
		} else {
			t.Logf("%s during the outage, refused as expected: %v", what, err)
		}
	}
	// Every v1alpha1 and v1beta1 GET needs the conversion webhook: it reads
	// etcd. A LIST is served from the API server's watch cache of that
	// version, which converted every object before the outage, and, since
	// nothing has changed (every write was refused), is current: it lists
	// them still.
	for name, obj := range map[string]client.Object{"legacy-1": &v1alpha1.TaskRun{}, "legacy": &v1alpha1.Task{},
		"hello-1": &v1beta1.TaskRun{}, "hello": &v1beta1.Task{}} {
		err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if err == nil || !strings.Contains(err.Error(), "conversion webhook") {
			t.Errorf("reading %T %s during the outage: got error %v, want one that names the conversion webhook", obj, name, err)
		} else {
			t.Logf("%T read during the outage, failed as expected: %v", obj, err)
		}
	}
	tasks, runs := listV1beta1(t, c)
	if diff := cmp.Diff(tasksBefore, tasks); diff != "" {
		t.Errorf("v1beta1 Tasks listed during the outage (-before +during):\n%s", diff)
	}
	if diff := cmp.Diff(runsBefore, runs); diff != "" {
		t.Errorf("v1beta1 TaskRuns listed during the outage (-before +during):\n%s", diff)
	}
	checkV1alpha1Lists(t, c, tasks, runs)

	m.start()
	create(t, c, wrappers.V1beta1Task(wrappers.Task(ns, "checked").Step("say", "alpine:3", "echo hi").Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, "after-outage", "hello").Obj()))

	// Everything reads again, in every version, exactly as it was (nothing
	// was written during the outage); a run created then is executed.
	got := waitFinished(t, c, time.Minute, "after-outage")
	if o := outcome(got["after-outage"]); o != "True/Succeeded" {
		t.Errorf("TaskRun after-outage ended %s, want True/Succeeded", o)
	}
	tasksAfter, runsAfter := listV1beta1(t, c)
	checkV1alpha1Lists(t, c, tasksAfter, runsAfter)
	delete(runsAfter, "after-outage")
	delete(tasksAfter, "checked")
	if diff := cmp.Diff(tasksBefore, tasksAfter); diff != "" {
		t.Errorf("v1beta1 Tasks after the outage (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(runsBefore, runsAfter); diff != "" {
		t.Errorf("v1beta1 TaskRuns after the outage (-before +after):\n%s", diff)
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
