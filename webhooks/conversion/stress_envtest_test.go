package conversion

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Conversion under stress (API.md): objects in etcd that no write through
// the API server could store today, put there directly as an earlier release
// or a client that got around admission could have.

func testMalformedTimeFailsNoList(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	mustCreate(t, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}})
	before := passthroughCount(t, "TaskRun")
	putInEtcd(t, "taskruns", ns, "bad", `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun",`+
		`"spec":{"taskRef":{"name":"t"}},"status":{"podName":"bad-pod","startTime":"2024-05-01t10:00:00z"}}`)

	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(v1alpha1.GroupVersion.String())
	list.SetKind("TaskRunList")
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing v1alpha1 TaskRuns with one malformed time among them: %v", err)
	}
	got := map[string]string{}
	for _, item := range list.Items {
		podName, _, _ := unstructured.NestedString(item.Object, "status", "podName")
		got[item.GetName()] = item.GetAPIVersion() + " " + podName
	}
	want := map[string]string{"good": "minitask.dev/v1alpha1 ", "bad": "minitask.dev/v1alpha1 bad-pod"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("v1alpha1 LIST (-want +got):\n%s", diff)
	}
	if passthroughCount(t, "TaskRun") <= before {
		t.Errorf("minitask_conversion_passthrough_total{kind=TaskRun} did not rise from %v", before)
	}
}

func testOversizedStashReadsThroughV1alpha1(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	// Five defaults of 64 KiB: each within the CRD's limit, their stash not.
	var params []v1beta1.ParamSpec
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		params = append(params, v1beta1.ParamSpec{Name: name, Default: ptr.To(strings.Repeat("x", 64<<10))})
	}
	task := &v1beta1.Task{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "Task"},
		Spec:     v1beta1.TaskSpec{Params: params, Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}},
	}
	data, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	putInEtcd(t, "tasks", ns, "big", string(data))

	spoke := &v1alpha1.Task{}
	mustGet(t, client.ObjectKey{Namespace: ns, Name: "big"}, spoke)
	if diff := cmp.Diff(map[string]string{AnnotationConversionDataOmitted: "true"}, spoke.Annotations); diff != "" {
		t.Errorf("v1alpha1 annotations (-want +got):\n%s", diff)
	}
	list := &v1alpha1.TaskList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("listing v1alpha1 Tasks: %d items, %v; want the one", len(list.Items), err)
	}
	hub := &v1beta1.Task{}
	mustGet(t, client.ObjectKey{Namespace: ns, Name: "big"}, hub)
	if len(hub.Spec.Params) != 5 || len(hub.Annotations) != 0 {
		t.Errorf("v1beta1 Task has %d params and annotations %v; want the 5 stored and none", len(hub.Spec.Params), hub.Annotations)
	}
}

// testReapplyAfterV1alpha1Write is issue 11's GitOps loop: apply a run with
// timeout: 10m, let a v1alpha1 client label it, and apply the same manifest
// again, server-side and client-side.
func testReapplyAfterV1alpha1Write(t *testing.T) {
	ns := env.Namespace(t)
	manifest := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: minitask.dev/v1beta1
kind: TaskRun
metadata: {name: gitops, namespace: `+ns+`}
spec:
  taskRef: {name: t}
  timeout: 10m
`), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) {
		t.Helper()
		if out, stderr, err := env.RunKubectl(args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
	}
	kubectl("apply", "--server-side", "-f", manifest)
	kubectl("label", "-n", ns, "taskruns.v1alpha1.minitask.dev", "gitops", "touched=v1alpha1")
	kubectl("apply", "--server-side", "-f", manifest)
	kubectl("label", "-n", ns, "taskruns.v1alpha1.minitask.dev", "gitops", "touched=again", "--overwrite")
	kubectl("apply", "-f", manifest)

	run := &unstructured.Unstructured{}
	run.SetAPIVersion(v1beta1.GroupVersion.String())
	run.SetKind("TaskRun")
	mustGet(t, client.ObjectKey{Namespace: ns, Name: "gitops"}, run)
	if timeout, _, _ := unstructured.NestedString(run.Object, "spec", "timeout"); timeout != "10m" {
		t.Errorf("stored timeout %q, want 10m as written", timeout)
	}
}

// putInEtcd stores object (JSON of a Task or TaskRun) under name in ns
// directly in etcd, as an earlier release may have.
func putInEtcd(t *testing.T, resource, ns, name, object string) {
	t.Helper()
	env.PutInEtcd(t, resource, ns, name, []byte(object))
}
