package storagemigration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestMigratorDropsManagedFieldsOfUnservedVersions writes objects through
// v1alpha1 every way a client can (server-side apply, an update, a status
// write), unserves v1alpha1 and checks that the migration drops exactly the
// entries naming it, leaves objects without such entries alone, and says so
// in an Event. Then it removes v1alpha1 from the CRDs and checks what that
// was for: server-side apply and updates of every object work, while an
// object that still has such an entry cannot be applied, until the
// migration, run again, repairs it.
func TestMigratorDropsManagedFieldsOfUnservedVersions(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

	// applied: server-side apply through v1alpha1; updated: created through
	// v1beta1, labelled through v1alpha1; status: a status write through
	// v1alpha1; modern: v1beta1 only.
	alphaApply(t, &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "applied"},
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "s", Image: "alpine"}}}}, "alpha-applier")
	env.Create(t, ns, betaTask("updated"), betaTask("modern"), betaTask("control"),
		&v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "status"}, Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "updated"}}})
	patch(t, &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "updated"}}, `{"metadata":{"labels":{"by":"alpha"}}}`, "alpha-updater")
	patch(t, &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modern"}}, `{"metadata":{"labels":{"by":"beta"}}}`, "beta-updater")
	run := &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "status"}}
	if err := env.Client.Status().Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`)),
		client.FieldOwner("alpha-status")); err != nil {
		t.Fatalf("writing the status of TaskRun status through v1alpha1: %v", err)
	}
	objects := map[string]client.Object{
		"Task/applied": &v1beta1.Task{}, "Task/updated": &v1beta1.Task{}, "Task/modern": &v1beta1.Task{},
		"Task/control": &v1beta1.Task{}, "TaskRun/status": &v1beta1.TaskRun{},
	}
	before := map[string]client.Object{}
	for name, obj := range objects {
		get(t, key(strings.Split(name, "/")[1]), obj)
		before[name] = obj.DeepCopyObject().(client.Object)
	}
	wantAlpha := map[string][]string{
		"Task/applied":   {"alpha-applier/Apply"},
		"Task/updated":   {"alpha-updater/Update"},
		"TaskRun/status": {"alpha-status/Update/status"},
	}
	if diff := cmp.Diff(wantAlpha, alphaEntries(before)); diff != "" {
		t.Fatalf("managedFields entries naming v1alpha1 before the migration (-want +got):\n%s", diff)
	}

	setVersions(t, func(v *apiextensionsv1.CustomResourceDefinitionVersion) bool {
		v.Served = v.Name != "v1alpha1"
		return true
	})
	recorder := events.NewFakeRecorder(10)
	m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client, Recorder: recorder}
	migrate(t, m)

	for name, obj := range objects {
		get(t, key(strings.Split(name, "/")[1]), obj)
		want := before[name].GetManagedFields()
		var kept []metav1.ManagedFieldsEntry
		for _, e := range want {
			if e.APIVersion != "minitask.dev/v1alpha1" {
				kept = append(kept, e)
			}
		}
		if diff := cmp.Diff(kept, obj.GetManagedFields(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("managedFields of %s after the migration, v1alpha1 unserved (-want +got):\n%s", name, diff)
		}
		if len(kept) == len(want) && obj.GetResourceVersion() != before[name].GetResourceVersion() {
			t.Errorf("%s, with no entry naming v1alpha1, was rewritten all the same", name)
		}
	}
	wantEvent := "Normal ManagedFieldsEntriesDropped dropped"
	if got := drain(recorder); !strings.Contains(got, wantEvent) || !strings.Contains(got, "naming minitask.dev/v1alpha1") {
		t.Errorf("Events = %q, want one with %q that names minitask.dev/v1alpha1", got, wantEvent)
	}
	if n := testenv.CounterValue(t, "minitask_storage_migration_managed_fields_entries_dropped_total",
		map[string]string{"crd": "tasks.minitask.dev", "version": "v1alpha1"}); n < 2 {
		t.Errorf("minitask_storage_migration_managed_fields_entries_dropped_total for Tasks and v1alpha1 = %v, want at least 2", n)
	}

	// What an object the migration had missed would look like.
	injectAlphaEntry(t, key("control"))
	setVersions(t, func(v *apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name != "v1alpha1" })

	err := betaApply(key("control"))
	if err == nil || !strings.Contains(err.Error(), "v1alpha1") {
		t.Fatalf("server-side apply of a Task with a v1alpha1 entry, v1alpha1 removed: got %v, want an error naming v1alpha1 "+
			"(kubernetes/kubernetes#111937); else this test proves nothing", err)
	}
	migrate(t, m)
	for name := range objects {
		name := strings.Split(name, "/")[1]
		if strings.HasPrefix(name, "status") {
			if err := env.Client.Patch(ctx, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
				client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"after":"removal"}}}`))); err != nil {
				t.Errorf("updating TaskRun %s through v1beta1, v1alpha1 removed: %v", name, err)
			}
			continue
		}
		if err := betaApply(key(name)); err != nil {
			t.Errorf("server-side apply of Task %s through v1beta1, v1alpha1 removed: %v", name, err)
		}
	}
}

func betaTask(name string) *v1beta1.Task {
	return &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}}
}

// alphaApply applies task through v1alpha1, server-side, as owner.
func alphaApply(t *testing.T, task *v1alpha1.Task, owner string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"apiVersion": "minitask.dev/v1alpha1", "kind": "Task",
		"metadata": map[string]any{"name": task.Name, "namespace": task.Namespace}, "spec": task.Spec})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Patch(context.Background(), task, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(owner)); err != nil {
		t.Fatalf("applying Task %s through v1alpha1: %v", task.Name, err)
	}
}

// betaApply applies the Task at key through v1beta1, server-side, adding a
// label, as the manager that applied one through v1alpha1.
func betaApply(key client.ObjectKey) error {
	body, err := json.Marshal(map[string]any{"apiVersion": "minitask.dev/v1beta1", "kind": "Task",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "labels": map[string]string{"applied": "v1beta1"}},
		"spec":     map[string]any{"steps": []any{map[string]any{"name": "s", "image": "alpine"}}}})
	if err != nil {
		return err
	}
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return env.Client.Patch(context.Background(), task, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner("alpha-applier"))
}

func patch(t *testing.T, obj client.Object, body, owner string) {
	t.Helper()
	if err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(body)), client.FieldOwner(owner)); err != nil {
		t.Fatalf("patching %T %s: %v", obj, obj.GetName(), err)
	}
}

func get(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, key, err)
	}
}

// alphaEntries lists, by object, the entries naming v1alpha1 as
// MANAGER/OPERATION[/SUBRESOURCE].
func alphaEntries(objs map[string]client.Object) map[string][]string {
	got := map[string][]string{}
	for name, obj := range objs {
		for _, e := range obj.GetManagedFields() {
			if e.APIVersion == "minitask.dev/v1alpha1" {
				got[name] = append(got[name], strings.TrimSuffix(fmt.Sprintf("%s/%s/%s", e.Manager, e.Operation, e.Subresource), "/"))
			}
		}
	}
	return got
}

// migrate runs the migration of both CRDs.
func migrate(t *testing.T, m *storagemigration.Migrator) {
	t.Helper()
	for _, crd := range storagemigration.CRDs {
		if _, err := m.MigrateCRD(context.Background(), crd); err != nil {
			t.Fatalf("migrating %s: %v", crd, err)
		}
	}
}

// injectAlphaEntry gives the Task at key a managedFields entry naming
// v1alpha1, of a manager of its own that owns a label: written straight into
// managedFields, as no client can write through v1alpha1 any more.
func injectAlphaEntry(t *testing.T, key client.ObjectKey) {
	t.Helper()
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch(t, task, `{"metadata":{"labels":{"legacy":"true"}}}`, "legacy-tool")
	entries := append(slices.Clip(task.ManagedFields), metav1.ManagedFieldsEntry{
		Manager: "legacy-tool", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "minitask.dev/v1alpha1",
		Time: &metav1.Time{Time: time.Now().Truncate(time.Second)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:legacy":{}}}}`),
	})
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": entries}})
	if err != nil {
		t.Fatal(err)
	}
	patch(t, task, string(body), "injector")
	if got := alphaEntries(map[string]client.Object{"control": task}); len(got) == 0 {
		t.Fatalf("no entry naming v1alpha1 after writing one: %v", task.ManagedFields)
	}
}

// setVersions changes the versions of both CRDs, keeping those for which
// change returns true, and restores them when the test ends. It waits
// until the API server serves v1beta1 with the new CRDs.
func setVersions(t *testing.T, change func(*apiextensionsv1.CustomResourceDefinitionVersion) bool) {
	t.Helper()
	ctx := context.Background()
	for _, name := range storagemigration.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		original := crd.DeepCopy().Spec.Versions
		var kept []apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range crd.Spec.Versions {
			if change(&v) {
				kept = append(kept, v)
			}
		}
		crd.Spec.Versions = kept
		if err := env.Client.Update(ctx, crd); err != nil {
			t.Fatalf("changing the versions of %s: %v", name, err)
		}
		t.Cleanup(func() {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				t.Fatal(err)
			}
			crd.Spec.Versions = original
			if err := env.Client.Update(ctx, crd); err != nil {
				t.Fatalf("restoring the versions of %s: %v", name, err)
			}
			waitEstablished(t, name, len(original))
		})
		waitEstablished(t, name, len(kept))
	}
}

// waitEstablished waits until the CRD is Established with n versions and its
// v1beta1 objects list.
func waitEstablished(t *testing.T, name string, n int) {
	t.Helper()
	testenv.Eventually(t, func() (bool, string) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			return false, err.Error()
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue && len(crd.Spec.Versions) == n {
				return env.Client.List(context.Background(), &v1beta1.TaskList{}) == nil, "listing v1beta1 Tasks"
			}
		}
		return false, fmt.Sprint(crd.Status.Conditions)
	}, "CRD %s to be established with %d versions", name, n)
}

// drain returns the Events recorded so far, one a line.
func drain(r *events.FakeRecorder) string {
	var lines []string
	for {
		select {
		case e := <-r.Events:
			lines = append(lines, e)
		default:
			return strings.Join(lines, "\n")
		}
	}
}
