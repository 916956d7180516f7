package storagemigration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestMigratorMovesStorageToV1 is release 6's upgrade: objects stored as
// v1alpha1 (by the first release, never migrated) and as v1beta1 (releases
// 2 to 5), written through every version each release served, v1 included,
// then v1 made the storage version. The migration must rewrite every one in
// v1 (read in etcd itself), trim storedVersions to [v1] from all three, and
// change nothing any version reads; what v1beta1 kept of v1 in the
// conversion annotation (a param's type) is then v1's own field, and
// timeout text v1's timeouts.total, as written.
func TestMigratorMovesStorageToV1(t *testing.T) {
	ctx := context.Background()
	etcd := etcdClient(t)
	ns := env.Namespace(t)

	setStorageVersion(t, "v1alpha1")
	env.Create(t, ns,
		wrappers.V1alpha1Task(ns, "first-task").Step("s", "alpine", "echo first").Obj(),
		wrappers.V1alpha1TaskRun(ns, "first-run", "first-task").Obj())
	setStorageVersion(t, "v1beta1")
	env.Create(t, ns,
		wrappers.Task(ns, "beta-task").Description("kept").ParamDefault("greeting", "hello").Step("s", "alpine", "echo $(params.greeting)").Obj(),
		wrappers.TaskRun(ns, "beta-run", "beta-task").Param("greeting", "hi").TimeoutText("10m").Obj(),
		wrappers.V1alpha1Task(ns, "alpha-task").Step("s", "alpine", "echo alpha").Obj(),
		wrappers.V1alpha1TaskRun(ns, "alpha-run", "alpha-task").Obj(),
		&minitaskv1.Task{ObjectMeta: metav1.ObjectMeta{Name: "v1-task"}, Spec: minitaskv1.TaskSpec{
			Params: []minitaskv1.ParamSpec{{Name: "who", Type: minitaskv1.ParamTypeString, Default: minitaskv1.NewStringValue("all")}},
			Steps:  []minitaskv1.Step{{Name: "s", Image: "alpine", Script: "echo $(params.who)"}},
		}},
		&minitaskv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "v1-run"}, Spec: minitaskv1.TaskRunSpec{
			TaskRef: minitaskv1.TaskRef{Name: "v1-task"}, Timeouts: minitaskv1.Timeouts{Total: durationText(t, "1h30m")},
		}})
	// A status, as release 5's controller writes it (v1beta1).
	status := `{"status":{"podName":"beta-run-pod","startTime":"2026-01-02T03:04:05Z","conditions":[{"type":"Succeeded","status":"Unknown",` +
		`"reason":"Running","message":"step s","lastTransitionTime":"2026-01-02T03:04:06Z"}]}}`
	if err := env.Client.Status().Patch(ctx, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta-run"}},
		client.RawPatch(types.MergePatchType, []byte(status))); err != nil {
		t.Fatal(err)
	}
	wantBefore := map[string]string{"tasks/first-task": "minitask.dev/v1alpha1", "taskruns/first-run": "minitask.dev/v1alpha1"}
	for _, key := range []string{"tasks/beta-task", "taskruns/beta-run", "tasks/alpha-task", "taskruns/alpha-run", "tasks/v1-task", "taskruns/v1-run"} {
		wantBefore[key] = "minitask.dev/v1beta1"
	}
	if diff := cmp.Diff(wantBefore, storedAPIVersionOf(t, etcd, ns)); diff != "" {
		t.Fatalf("etcd before the upgrade (-want +got):\n%s", diff)
	}
	if a := storedAnnotations(t, etcd, ns, "tasks/v1-task"); !strings.Contains(a["minitask.dev/conversion-data"], `"v1"`) {
		t.Fatalf("stored as v1beta1, Task v1-task should keep its param's type in the annotation's v1 member; its annotations: %v", a)
	}
	before := readEveryVersion(t, ns)

	setStorageVersion(t, "v1")
	for _, crd := range storagemigration.CRDs {
		if got := slices.Sorted(slices.Values(storedVersions(t, crd))); !isSubset([]string{"v1", "v1alpha1", "v1beta1"}, got) {
			t.Fatalf("%s storedVersions before the migration = %v, want v1alpha1, v1beta1 and v1 among them", crd, got)
		}
	}
	m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client}
	for _, crd := range storagemigration.CRDs {
		rewritten, err := m.MigrateCRD(ctx, crd)
		if err != nil {
			t.Fatalf("migrating %s: %v", crd, err)
		}
		if rewritten < 4 {
			t.Errorf("%s: rewrote %d objects, want at least this test's 4", crd, rewritten)
		}
		if got := storedVersions(t, crd); !cmp.Equal(got, []string{"v1"}) {
			t.Errorf("%s storedVersions = %v, want [v1]", crd, got)
		}
		if again, err := m.MigrateCRD(ctx, crd); err != nil || again != 0 {
			t.Errorf("second migration of %s rewrote %d (err %v), want 0", crd, again, err)
		}
	}

	if diff := cmp.Diff(map[string]string{}, notStoredIn(t, etcd, ns, "minitask.dev/v1")); diff != "" {
		t.Errorf("objects not stored as v1 after the migration (-want +got):\n%s", diff)
	}
	stored := map[string]any{}
	for _, key := range []string{"tasks/v1-task", "taskruns/v1-run", "taskruns/beta-run"} {
		obj := storedObject(t, etcd, ns, key)
		stored[key] = map[string]any{"annotations": field(obj, "metadata", "annotations"), "spec": field(obj, "spec")}
	}
	wantStored := map[string]any{
		"tasks/v1-task": map[string]any{"annotations": nil, "spec": map[string]any{
			"params": []any{map[string]any{"name": "who", "type": "string", "default": "all"}},
			"steps":  []any{map[string]any{"name": "s", "image": "alpine", "script": "echo $(params.who)"}},
		}},
		"taskruns/v1-run": map[string]any{"annotations": nil, "spec": map[string]any{
			"taskRef": map[string]any{"name": "v1-task"}, "timeouts": map[string]any{"total": "1h30m"},
		}},
		"taskruns/beta-run": map[string]any{"annotations": nil, "spec": map[string]any{
			"taskRef": map[string]any{"name": "beta-task"}, "params": []any{map[string]any{"name": "greeting", "value": "hi"}},
			"timeouts": map[string]any{"total": "10m"},
		}},
	}
	if diff := cmp.Diff(wantStored, stored); diff != "" {
		t.Errorf("what etcd holds of objects written through v1 and v1beta1, after the migration (-want +got):\n%s", diff)
	}

	// A rewrite changes the resourceVersion, and nothing else of what any
	// version reads.
	if diff := cmp.Diff(before, readEveryVersion(t, ns), cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")); diff != "" {
		t.Errorf("objects read through every version, before and after the migration (-before +after):\n%s", diff)
	}
}

// readEveryVersion reads every Task and TaskRun of namespace ns through
// v1alpha1, v1beta1 and v1, one GET each (a LIST would be served from the
// watch cache), by "VERSION KIND/NAME".
func readEveryVersion(t *testing.T, ns string) map[string]client.Object {
	t.Helper()
	ctx := context.Background()
	var tasks v1beta1.TaskList
	var runs v1beta1.TaskRunList
	for _, list := range []client.ObjectList{&tasks, &runs} {
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]client.Object{}
	read := func(name string, objs ...client.Object) {
		for _, obj := range objs {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
				t.Fatalf("reading %T %s: %v", obj, name, err)
			}
			got[fmt.Sprintf("%T/%s", obj, name)] = obj
		}
	}
	for _, task := range tasks.Items {
		read(task.Name, &v1alpha1.Task{}, &v1beta1.Task{}, &minitaskv1.Task{})
	}
	for _, run := range runs.Items {
		read(run.Name, &v1alpha1.TaskRun{}, &v1beta1.TaskRun{}, &minitaskv1.TaskRun{})
	}
	return got
}

// storedObject reads the object at RESOURCE/NAME of namespace ns from etcd
// itself, as JSON.
func storedObject(t *testing.T, etcd *clientv3.Client, ns, key string) map[string]any {
	t.Helper()
	resource, name, _ := strings.Cut(key, "/")
	resp, err := etcd.Get(context.Background(), "/registry/minitask.dev/"+resource+"/"+ns+"/"+name)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s from etcd: %v (%d keys)", key, err, len(resp.Kvs))
	}
	var obj map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// storedAnnotations are the annotations of the object at RESOURCE/NAME of
// namespace ns, as etcd holds them.
func storedAnnotations(t *testing.T, etcd *clientv3.Client, ns, key string) map[string]string {
	t.Helper()
	got := map[string]string{}
	annotations, _ := field(storedObject(t, etcd, ns, key), "metadata", "annotations").(map[string]any)
	for k, v := range annotations {
		got[k], _ = v.(string)
	}
	return got
}

// field returns the value at path in obj, nil if there is none.
func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// durationText is a v1 duration as a user writes it: its text is kept.
func durationText(t *testing.T, text string) *minitaskv1.Duration {
	t.Helper()
	d := &minitaskv1.Duration{}
	if err := json.Unmarshal([]byte(`"`+text+`"`), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// isSubset says whether every element of want is in got.
func isSubset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestMigratorToV1LeavesAMalformedTimeToTheRepair stores, as release 2 let
// a status writer, a v1beta1 run with a time Go cannot read and a timeout,
// then makes v1 the storage version. Conversion passes such a run through
// to v1 as stored, where v1beta1's spec.timeout would be pruned, so the
// stash guard refuses to let it be rewritten: the migration must say it is
// incomplete, naming the run, and leave it as stored; once the time is
// repaired (internal/timerepair, at the manager's start), the migration
// must rewrite it in v1, its timeout as timeouts.total.
func TestMigratorToV1LeavesAMalformedTimeToTheRepair(t *testing.T) {
	ctx := context.Background()
	etcd := etcdClient(t)
	ns := env.Namespace(t)
	setStorageVersion(t, "v1beta1")
	const stored = `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun","spec":{"taskRef":{"name":"build"},"timeout":"20m"},` +
		`"status":{"startTime":"2024-05-01t10:00:00z"}}`
	env.PutInEtcd(t, "taskruns", ns, "malformed", []byte(stored))
	setStorageVersion(t, "v1")

	m := &storagemigration.Migrator{Reader: env.Client, Writer: env.Client}
	_, err := m.MigrateCRD(ctx, "taskruns.minitask.dev")
	var incomplete *storagemigration.IncompleteError
	if !errors.As(err, &incomplete) || !strings.Contains(err.Error(), ns+"/malformed") || !strings.Contains(err.Error(), "cannot be converted") {
		t.Fatalf("migrating with a run no typed decode takes: %v; want it incomplete, naming the run and why", err)
	}
	if got := field(storedObject(t, etcd, ns, "taskruns/malformed"), "spec"); !cmp.Equal(got, map[string]any{"taskRef": map[string]any{"name": "build"}, "timeout": "20m"}) {
		t.Errorf("the run's spec in etcd after the refused rewrite: %v, want it as stored", got)
	}

	// What the time repair writes: the same instant in RFC 3339.
	repair := `[{"op":"replace","path":"/status/startTime","value":"2024-05-01T10:00:00Z"}]`
	run := &metav1.PartialObjectMetadata{}
	run.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRun"))
	run.Namespace, run.Name = ns, "malformed"
	if err := env.Client.Status().Patch(ctx, run, client.RawPatch(types.JSONPatchType, []byte(repair))); err != nil {
		t.Fatalf("repairing the time: %v", err)
	}
	if _, err := m.MigrateCRD(ctx, "taskruns.minitask.dev"); err != nil {
		t.Fatalf("migrating once the time is repaired: %v", err)
	}
	obj := storedObject(t, etcd, ns, "taskruns/malformed")
	got := map[string]any{"apiVersion": obj["apiVersion"], "spec": obj["spec"], "startTime": field(obj, "status", "startTime")}
	want := map[string]any{"apiVersion": "minitask.dev/v1", "startTime": "2024-05-01T10:00:00Z",
		"spec": map[string]any{"taskRef": map[string]any{"name": "build"}, "timeouts": map[string]any{"total": "20m"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the run in etcd once migrated (-want +got):\n%s", diff)
	}
}
