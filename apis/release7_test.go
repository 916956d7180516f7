package apis_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// release7Task uses every Task field release 7 runs and release 6 keeps.
const release7Task = `apiVersion: minitask.dev/v1
kind: Task
spec:
  stepTemplate:
    env: [{name: GOFLAGS, value: -mod=mod}]
    envFrom: [{configMapRef: {name: settings}}]
    securityContext: {runAsNonRoot: true}
    imagePullPolicy: IfNotPresent
  sidecars:
  - name: db
    image: postgres:17
    env: [{name: POSTGRES_PASSWORD, value: test}]
    ports: [{containerPort: 5432}]
    readinessProbe: {exec: {command: [pg_isready]}, periodSeconds: 1}
    startupProbe: {tcpSocket: {port: 5432}}
    securityContext: {capabilities: {drop: [ALL]}}
    imagePullPolicy: Always
    computeResources: {requests: {cpu: 100m}}
  steps:
  - name: build
    image: quay.io/buildah/stable
    script: buildah bud .
    securityContext: {capabilities: {add: [SETFCAP]}}
    imagePullPolicy: Always
    timeout: 10m
`

// TestAPIServerKeepsRelease7Fields: the schema keeps every field release 7
// runs (release 6's kept them too, so that a rollback from release 7 prunes
// none of them), and admission accepts them, sidecars included. An object
// release 7 stored (put straight into etcd here) reads whole through every
// version, and still takes labels and a cancel.
func TestAPIServerKeepsRelease7Fields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)

	task := mustUnstructured(t, release7Task+"metadata: {name: created}\n", ns)
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatalf("creating a v1 Task with every release 7 field, sidecars included: %v", err)
	}
	run := mustUnstructured(t, "apiVersion: minitask.dev/v1\nkind: TaskRun\nmetadata: {name: created-inline}\n"+
		"spec:\n  taskSpec:\n    steps: [{name: s, image: alpine}]\n    sidecars: [{name: db, image: postgres}]\n", ns)
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("creating a v1 run whose taskSpec has sidecars: %v", err)
	}

	// What release 7 stores.
	taskJSON := jsonOfYAML(t, release7Task)
	env.PutInEtcd(t, "tasks", ns, "build", taskJSON)
	runYAML := "apiVersion: minitask.dev/v1\nkind: TaskRun\nspec:\n  taskSpec:\n" + indent(specOf(t, release7Task), "    ") +
		"status:\n  podName: inline-pod\n  taskSpec:\n" + indent(specOf(t, release7Task), "    ") +
		"  sidecars: [{name: db, state: Running, ready: true, restartCount: 0}]\n"
	env.PutInEtcd(t, "taskruns", ns, "inline", jsonOfYAML(t, runYAML))

	for _, c := range []struct {
		resource, name string
		want           []string // fields of the v1 object, as JSON paths
	}{
		{"tasks", "build", []string{"spec.stepTemplate", "spec.sidecars", "spec.steps.0.securityContext", "spec.steps.0.imagePullPolicy", "spec.steps.0.timeout"}},
		{"taskruns", "inline", []string{"spec.taskSpec.sidecars", "spec.taskSpec.stepTemplate", "status.taskSpec.sidecars", "status.sidecars"}},
	} {
		kind := map[string]string{"tasks": "Task", "taskruns": "TaskRun"}[c.resource]
		key := client.ObjectKey{Namespace: ns, Name: c.name}
		stored := get(t, schema.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: kind}, key)
		for _, path := range c.want {
			if !has(stored.Object, strings.Split(path, ".")...) {
				t.Errorf("%s %s read through v1 lacks %s: pruned", kind, c.name, path)
			}
		}
		// Written back unchanged through each version, the spoke's with the
		// v1 member of its annotation: nothing is refused, nothing changes.
		for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
			obj := get(t, schema.GroupVersionKind{Group: "minitask.dev", Version: version, Kind: kind}, key)
			if err := env.Client.Update(ctx, obj); err != nil {
				t.Errorf("writing %s %s back through %s: %v", kind, c.name, version, err)
			}
			if after := get(t, stored.GroupVersionKind(), key); !sameContent(stored, after) {
				t.Errorf("%s %s changed when written back through %s", kind, c.name, version)
			}
		}
	}

	// Labelled and cancelled through v1: the immutability rules hold on a
	// run without taskRef.
	stored := get(t, schema.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: "TaskRun"}, client.ObjectKey{Namespace: ns, Name: "inline"})
	stored.SetLabels(map[string]string{"team": "a"})
	if err := env.Client.Update(ctx, stored); err != nil {
		t.Fatalf("labelling release 7's run through v1: %v", err)
	}
	if err := unstructured.SetNestedField(stored.Object, "Cancelled", "spec", "status"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, stored); err != nil {
		t.Fatalf("cancelling release 7's run through v1: %v", err)
	}
	// Its taskSpec is immutable, and a taskRef cannot join it.
	unstructured.RemoveNestedField(stored.Object, "spec", "taskSpec", "sidecars")
	if err := env.Client.Update(ctx, stored); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "taskSpec is immutable") {
		t.Errorf("changing a run's taskSpec: %v; want it refused as immutable", err)
	}
}

func TestAPIServerRefusesInvalidRelease7Fields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const v1Task = "apiVersion: minitask.dev/v1\nkind: Task\nmetadata: {name: t}\n"
	const v1Run = "apiVersion: minitask.dev/v1\nkind: TaskRun\nmetadata: {name: r}\n"
	for name, tc := range map[string]struct{ obj, field, also string }{
		"a run with neither taskRef nor taskSpec": {
			obj: v1Run + "spec: {params: [{name: a, value: b}]}", field: "spec", also: "exactly one of taskRef and taskSpec"},
		"a run with both taskRef and taskSpec": {
			obj: v1Run + "spec: {taskRef: {name: t}, taskSpec: {steps: [{name: s, image: i}]}}", field: "spec", also: "exactly one of taskRef and taskSpec"},
		"a pull policy that is none": {
			obj: v1Task + "spec: {steps: [{name: s, image: i, imagePullPolicy: Sometimes}]}", field: "spec.steps[0].imagePullPolicy"},
		"a negative step timeout": {
			obj: v1Task + "spec: {steps: [{name: s, image: i, timeout: -1m}]}", field: "spec.steps[0].timeout", also: "must not be negative"},
		"a sidecar with a step's name": {
			obj: v1Task + "spec: {steps: [{name: s, image: i}], sidecars: [{name: s, image: i}]}", field: "spec.sidecars", also: "a sidecar cannot have a step's name"},
		"a sidecar with a script and a command": {
			obj: v1Task + "spec: {steps: [{name: s, image: i}], sidecars: [{name: db, image: i, script: x, command: [run]}]}", field: "spec.sidecars[0]", also: "command and args cannot be used with script"},
		"a sidecar's port past 65535": {
			obj: v1Task + "spec: {steps: [{name: s, image: i}], sidecars: [{name: db, image: i, ports: [{containerPort: 70000}]}]}", field: "spec.sidecars[0].ports", also: "ports must be from 1 to 65535"},
		"a probe's period past int32": {
			obj:   v1Task + "spec: {steps: [{name: s, image: i}], sidecars: [{name: db, image: i, readinessProbe: {exec: {command: [x]}, periodSeconds: 2147483648}}]}",
			field: "spec.sidecars[0].readinessProbe", also: "from 0 to 2147483647"},
		"a probe's port past 65535": {
			obj:   v1Task + "spec: {steps: [{name: s, image: i}], sidecars: [{name: db, image: i, startupProbe: {tcpSocket: {port: 65536}}}]}",
			field: "spec.sidecars[0].startupProbe", also: "from 1 to 65535"},
		"eleven sidecars": {
			obj:   v1Task + "spec:\n  steps: [{name: s, image: i}]\n  sidecars: [" + flowList(11, func(n string) string { return "{name: c" + n + ", image: i}" }) + "]",
			field: "spec.sidecars"},
	} {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, mustUnstructured(t, tc.obj, ns))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.also) {
				t.Errorf("got %v; want Invalid naming %s (%s)", err, tc.field, tc.also)
			}
		})
	}
}

func get(t *testing.T, gvk schema.GroupVersionKind, key client.ObjectKey) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := env.Client.Get(context.Background(), key, u); err != nil {
		t.Fatalf("reading %s %s: %v", gvk, key, err)
	}
	return u
}

// sameContent compares two reads' annotations, spec and status.
func sameContent(a, b *unstructured.Unstructured) bool {
	content := func(u *unstructured.Unstructured) string {
		data, _ := json.Marshal([]any{u.GetAnnotations(), u.Object["spec"], u.Object["status"]}) //nolint:errchkjson // maps of JSON
		return string(data)
	}
	return content(a) == content(b)
}

func has(obj map[string]any, path ...string) bool {
	var at any = obj
	for _, p := range path {
		switch v := at.(type) {
		case map[string]any:
			at = v[p]
		case []any:
			if p != "0" || len(v) == 0 {
				return false
			}
			at = v[0]
		default:
			return false
		}
		if at == nil {
			return false
		}
	}
	return true
}

func jsonOfYAML(t *testing.T, doc string) []byte {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// specOf is the spec of doc, a Task's YAML, as YAML.
func specOf(t *testing.T, doc string) string {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(obj["spec"])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func indent(text, by string) string {
	lines := strings.SplitAfter(strings.TrimRight(text, "\n"), "\n")
	return by + strings.Join(lines, by) + "\n"
}
