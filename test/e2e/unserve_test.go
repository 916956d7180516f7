//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestUnserveV1alpha1 rehearses the next two stages of v1alpha1's life on
// the current release, as docs/upgrading.md tells an operator to go through
// them: v1alpha1 `served: false`, then v1alpha1 removed from the CRDs. The
// release keeps serving v1alpha1: the stages are patched into the rendered
// CRDs here. Objects are first written through v1alpha1 every way a client
// can (server-side and client-side apply, an update, a status write), so
// that their managedFields name minitask.dev/v1alpha1. Before each stage,
// what the operator must do is done by the manager (its storage migration,
// on restart) and checked with the documented commands: storedVersions is
// [v1] (release 6 stores v1), and, before the removal, no managedFields entry names
// v1alpha1. After each, v1beta1 clients (server-side apply, client-side
// apply, updates), the controller and kubectl task work with no error, and
// a v1alpha1 client gets a 404. One object given back a v1alpha1 entry just
// before the removal shows what the migration prevents (server-side apply
// fails, kubernetes/kubernetes#111937) and that it repairs it even then.
func TestUnserveV1alpha1(t *testing.T) {
	t.Parallel()
	u := &unserving{rehearsal: newRehearsalOn(t, "unserve")}
	u.m = startManager(t, u.c)
	u.writeThroughV1alpha1()
	u.lap("objects through v1alpha1")

	u.checkStoredVersions()
	before := u.readVersions(false, true)
	delete(before.betaRuns, runAcross)
	u.applyCRDs(unserveV1alpha1)
	u.restartManager()
	u.waitNoManagedFieldsNaming(v1alpha1.GroupVersion.String())
	u.checkViewsKept(before, nil, "after v1alpha1 was unserved and the migration ran")
	u.checkClients("unserved")
	u.lap("v1alpha1 unserved")

	u.checkStoredVersions()
	if got := u.v1alpha1ManagedFields(); len(got) > 0 {
		t.Fatalf("before removing v1alpha1, managedFields still name it:\n%s", strings.Join(got, "\n"))
	}
	u.injectV1alpha1Entry(controlTask)
	u.applyCRDs(removeV1alpha1)
	u.checkApplyFailsOn(controlTask)
	u.restartManager()
	u.waitNoManagedFieldsNaming(v1alpha1.GroupVersion.String())
	u.checkClients("removed")
	u.lap("v1alpha1 removed")

	if got := waitFinished(t, u.c, time.Minute, runAcross); outcome(got[runAcross]) != "True/Succeeded" {
		t.Errorf("TaskRun %s, in flight when v1alpha1 was unserved, ended %s, want True/Succeeded", runAcross, outcome(got[runAcross]))
	}
	u.checkStorageMigrated(currentStorage)
	u.t.Logf("unserving rehearsal: %d objects had managedFields naming v1alpha1 (%s); %s",
		len(u.named), strings.Join(u.named, ", "), u.timesLine())
}

// unserving carries what the steps of the unserving rehearsal share.
type unserving struct {
	*rehearsal
	// named are the objects whose managedFields named v1alpha1 before the
	// first stage, as the documented command printed them.
	named []string
}

// The objects of the unserving rehearsal, and what wrote them.
const (
	ssaTask       = "legacy-ssa"     // kubectl apply --server-side, v1alpha1
	ssaRun        = "legacy-ssa-run" // kubectl apply --server-side, v1alpha1
	csaTask       = "legacy-csa"     // kubectl apply (client-side), v1alpha1
	csaRun        = "legacy-csa-run" // kubectl apply (client-side), v1alpha1
	greetTaskName = "greet"          // created through v1beta1, labelled through v1alpha1
	stoppedRun    = "stopped"        // created through v1beta1, failed through v1alpha1's status
	controlTask   = "control"        // created through v1beta1; given a v1alpha1 entry before the removal
	runAcross     = "across"         // in flight when v1alpha1 is unserved
)

// writeThroughV1alpha1 writes objects through v1alpha1 every way a client
// can, and checks that their managedFields name v1alpha1.
func (u *unserving) writeThroughV1alpha1() {
	t, ctx := u.t, context.Background()
	alphaManifest := func(obj client.Object, spec any) map[string]any {
		return map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": kindOf(obj),
			"metadata": map[string]any{"name": obj.GetName(), "namespace": ns}, "spec": spec,
		}
	}
	build := wrappers.V1alpha1Task(ns, ssaTask).Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...").Obj()
	u.kubectl("apply", "--server-side", "-f", u.manifestFile("ssa.yaml",
		alphaManifest(build, build.Spec), alphaManifest(wrappers.V1alpha1TaskRun(ns, ssaRun, ssaTask).Obj(), v1alpha1.TaskRunSpec{TaskRef: ssaTask})))
	csa := wrappers.V1alpha1Task(ns, csaTask).Step("say", "alpine:3", "echo hi").Obj()
	u.kubectl("apply", "-f", u.manifestFile("csa.yaml",
		alphaManifest(csa, csa.Spec), alphaManifest(wrappers.V1alpha1TaskRun(ns, csaRun, csaTask).Obj(), v1alpha1.TaskRunSpec{TaskRef: csaTask})))

	create(t, u.c, greetTask(greetTaskName), wrappers.V1beta1Task(wrappers.Task(ns, controlTask).Step("say", "alpine:3", "echo control").Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, stoppedRun, greetTaskName).Param("name", "stan").Param("pause", "600").Obj()))
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"written-through":"v1alpha1"}}}`))
	if err := u.c.client.Patch(ctx, &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: greetTaskName}}, label); err != nil {
		t.Fatalf("labelling Task %s through v1alpha1: %v", greetTaskName, err)
	}
	u.waitReason(map[string]v1beta1.TaskRunReason{stoppedRun: v1beta1.ReasonRunning})
	u.failThroughV1alpha1(stoppedRun)
	waitFinished(t, u.c, time.Minute, ssaRun, csaRun)
	create(t, u.c, wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, runAcross, greetTaskName).Param("name", "ada").Param("pause", "20").Obj()))

	u.named = u.v1alpha1ManagedFields()
	want := map[string][]string{"Task": {ssaTask, csaTask, greetTaskName}, "TaskRun": {ssaRun, csaRun, stoppedRun}}
	for kind, names := range want {
		for _, name := range names {
			if !containsPrefix(u.named, kind+"/"+ns+"/"+name+":") {
				t.Fatalf("the managedFields of %s %s do not name v1alpha1; the rehearsal needs them to. Objects whose do:\n%s",
					kind, name, strings.Join(u.named, "\n"))
			}
		}
	}
}

// kindOf is the kind of a minitask object.
func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *v1alpha1.Task, *v1beta1.Task, *minitaskv1.Task:
		return "Task"
	default:
		return "TaskRun"
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// crdStage changes the versions of a rendered CRD.
type crdStage func(versions []any) []any

// unserveV1alpha1 is the first stage: v1alpha1 `served: false`.
func unserveV1alpha1(versions []any) []any {
	for _, v := range versions {
		if v := v.(map[string]any); v["name"] == "v1alpha1" {
			v["served"] = false
		}
	}
	return versions
}

// removeV1alpha1 is the second stage: v1alpha1 gone from the CRDs.
func removeV1alpha1(versions []any) []any {
	var kept []any
	for _, v := range versions {
		if v.(map[string]any)["name"] != "v1alpha1" {
			kept = append(kept, v)
		}
	}
	return kept
}

// applyCRDs applies the cluster's rendered CRDs (the current release's, as
// installed) changed by stage, as the operator applies a release's.
func (u *unserving) applyCRDs(stage crdStage) {
	t := u.t
	b, err := os.ReadFile(u.c.env["MINITASK_MANIFESTS"])
	if err != nil {
		t.Fatal(err)
	}
	var crds []map[string]any
	for _, doc := range yamlDocuments(t, b) {
		if doc["kind"] == "CustomResourceDefinition" {
			spec := doc["spec"].(map[string]any)
			spec["versions"] = stage(spec["versions"].([]any))
			crds = append(crds, doc)
		}
	}
	if len(crds) != len(crdNames) {
		t.Fatalf("%s holds %d CRDs, want %d", u.c.env["MINITASK_MANIFESTS"], len(crds), len(crdNames))
	}
	u.kubectl("apply", "--server-side", "--force-conflicts", "-f", u.manifestFile("crds.yaml", crds...))
	u.kubectl(append([]string{"wait", "--for=condition=Established", "--timeout=30s"}, prefixAll("crd/", crdNames)...)...)
}

func prefixAll(prefix string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = prefix + v
	}
	return out
}

// restartManager restarts the manager, as rolling out the release of a stage
// does: on start, its storage migration drops the managedFields entries of
// versions no longer served.
func (u *unserving) restartManager() {
	u.m.stop()
	u.m.start()
}

// checkStoredVersions runs docs/upgrading.md's check that storedVersions is
// [v1] (the storage migration has run to its end): the first thing an
// operator checks before either stage.
func (u *unserving) checkStoredVersions() {
	t := u.t
	var out string
	want := "[" + currentStorage + "]"
	waitFor(t, time.Minute, "storedVersions "+want+" in "+strings.Join(crdNames, " and "), func(ctx context.Context) error {
		var err error
		if out, err = u.c.runKubectl(ctx, append(append([]string{"get", "crd"}, crdNames...),
			"-o", "custom-columns=NAME:.metadata.name,STORED:.status.storedVersions")...); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
		if len(lines) != len(crdNames) {
			return fmt.Errorf("kubectl printed %q", out)
		}
		for _, line := range lines {
			if f := strings.Fields(line); len(f) != 2 || f[1] != want {
				return fmt.Errorf("kubectl printed %q", out)
			}
		}
		return nil
	})
}

// managedFieldsJSONPath is docs/upgrading.md's template that prints, for
// every Task and TaskRun, the manager and apiVersion of each of its
// managedFields entries: "KIND/NAMESPACE/NAME: MANAGER=APIVERSION ...".
const managedFieldsJSONPath = `jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}:` +
	`{range .metadata.managedFields[*]} {.manager}={.apiVersion}{end}{"\n"}{end}`

// v1alpha1ManagedFields runs docs/upgrading.md's command with
// managedFieldsJSONPath and returns the lines that name minitask.dev/v1alpha1.
func (u *unserving) v1alpha1ManagedFields() []string {
	u.t.Helper()
	return u.managedFieldsNaming(v1alpha1.GroupVersion.String())
}

// managedFieldsNaming runs docs/upgrading.md's command with
// managedFieldsJSONPath and returns the lines with an entry that names
// apiVersion (minitask.dev/v1 is not minitask.dev/v1beta1).
func (r *rehearsal) managedFieldsNaming(apiVersion string) []string {
	r.t.Helper()
	out := r.kubectl("get", "tasks.v1beta1.minitask.dev,taskruns.v1beta1.minitask.dev", "-A",
		"--show-managed-fields", "-o", managedFieldsJSONPath)
	var named []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		_, entries, _ := strings.Cut(line, ":")
		for _, entry := range strings.Fields(entries) {
			if strings.HasSuffix(entry, "="+apiVersion) {
				named = append(named, line)
				break
			}
		}
	}
	return named
}

// waitNoManagedFieldsNaming waits until the storage migration of the
// manager running now has dropped every managedFields entry that names
// apiVersion.
func (r *rehearsal) waitNoManagedFieldsNaming(apiVersion string) {
	waitFor(r.t, time.Minute, "no managedFields entry to name "+apiVersion, func(context.Context) error {
		if named := r.managedFieldsNaming(apiVersion); len(named) > 0 {
			return fmt.Errorf("still named by:\n%s", strings.Join(named, "\n"))
		}
		return nil
	})
}

// injectV1alpha1Entry gives Task name a managedFields entry that names
// v1alpha1, as an object the migration had missed would have: an entry of
// a manager of its own, owning a label, written straight into managedFields.
func (u *unserving) injectV1alpha1Entry(name string) {
	t, ctx := u.t, context.Background()
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"legacy":"true"}}}`))
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := u.c.client.Patch(ctx, task, label); err != nil {
		t.Fatal(err)
	}
	entries := append(slices.Clip(task.ManagedFields), metav1.ManagedFieldsEntry{
		Manager: "legacy-tool", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "minitask.dev/v1alpha1",
		Time: &metav1.Time{Time: time.Now().Truncate(time.Second)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:legacy":{}}}}`),
	})
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": entries}})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.c.client.Patch(ctx, task, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("giving Task %s a managedFields entry of v1alpha1: %v", name, err)
	}
	if got := u.v1alpha1ManagedFields(); !containsPrefix(got, "Task/"+ns+"/"+name+":") {
		t.Fatalf("Task %s has no managedFields entry of v1alpha1 after writing one: %v", name, got)
	}
}

// checkApplyFailsOn checks that, v1alpha1 removed, server-side apply of
// Task name, whose managedFields still name v1alpha1, fails: what the
// migration's rewrite prevents.
func (u *unserving) checkApplyFailsOn(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := u.manifestFile("control.yaml", betaManifest(u.getBetaTask(name), "removed", "true"))
	out, err := u.c.runKubectl(ctx, "apply", "--server-side", "-f", path)
	if err == nil || !strings.Contains(out, "v1alpha1") {
		u.t.Errorf("server-side apply of Task %s, whose managedFields name the removed v1alpha1: got %v, %q; "+
			"want it to fail naming v1alpha1 (kubernetes/kubernetes#111937): else this rehearsal proves nothing", name, err, out)
		return
	}
	u.t.Logf("server-side apply of Task %s with a v1alpha1 entry, v1alpha1 removed, fails as expected: %s", name, strings.TrimSpace(out))
}
