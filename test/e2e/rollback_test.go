//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestRollbackToRelease4 rehearses the rollback from release 5 (as it
// shipped: its CRDs and real manager, built from git history) to release 4,
// as docs/upgrading.md tells an operator to roll back, and the roll forward
// after it. Release 5's objects are written
// through all three versions it serves, v1 included (string params,
// timeouts.total, a param said to be a string), with runs in flight; then
// release 4's CRDs and real manager are installed. Release 4's CRDs must be
// accepted (storedVersions [v1beta1], nothing stored as v1); every object
// must read through v1alpha1 and v1beta1 as before, what was written
// through v1 included; the runs in flight must finish once, their logs
// kept; release 4's storage migration must drop the managedFields entries
// naming v1, which it does not serve, and nothing else, so that
// server-side apply still works. Rolled forward, release 5 must read every
// object through every version as before the rollback.
func TestRollbackToRelease4(t *testing.T) {
	t.Parallel()
	r := newV1Rehearsal(t, "rollback-4", release5, release4)
	// The runs in flight must outlast the rollback, not the build of
	// release 4's manager: it is built before they start.
	release4.build(t)
	r.installRelease(release5, views{}, nil)
	r.lap("install release 5")
	before := r.createRelease5Objects()
	r.checkV1Views("under release 5")
	r.lap("release 5")

	r.installRelease(release4, before, release5InFlight, r.runningPods(r5Running, r5aRunning, v1Running)...)
	r.checkRelease4CRDs()
	r.lap("rollback to release 4")
	r.checkRunsFinished(release5Outcomes, 2*release5RunningSeconds*time.Second, "of release 5, after the rollback to release 4")
	r.checkRunPods(r5Running, r5aRunning, v1Running, v1New)
	r.checkViewsKept(before, release5InFlight, "after the rollback to release 4, listed", withoutV1Stash)
	r.compareViewsKept(before, r.getViews(), release5InFlight, "after the rollback to release 4, read one by one", withoutV1Stash)
	r.waitNoManagedFieldsNaming(minitaskv1.GroupVersion.String())
	r.checkV1EntriesDropped()
	r.checkManagedFieldsKept(before, release5InFlight, "after the rollback to release 4", minitaskv1.GroupVersion.String())
	r.applyV1ObjectsThroughV1beta1()
	r.checkManagerLog("after the rollback to release 4")
	r.checkPods()
	r.checkStorageMigrated(frozenStorage)
	r.lap("runs in flight finished")

	r.installRelease(release5, r.readViews(), nil)
	// Listed, the objects that nothing wrote since the roll forward are as
	// release 4's manager converted them when release 5's CRDs came in (see
	// getViews): without the v1 member of the stash. Read one by one, they
	// are as release 5 converts them, exactly as before the rollback.
	r.checkViewsKept(before, release5InFlight, "after the roll forward to release 5, listed", withoutV1Stash)
	r.compareViewsKept(before, r.getViews(), release5InFlight, "after the roll forward to release 5, read one by one")
	r.checkWritten("after the roll forward to release 5")
	r.checkV1Views("after the roll forward to release 5")
	r.checkManagerLog("after the roll forward to release 5")
	r.checkPods()
	r.checkStorageMigrated(frozenStorage)
	r.lap("roll forward to release 5")
	r.report("release 5 → 4 → 5")
}

// Release 5's objects besides v1Greet and v1Done (writeV1Objects): v1-
// written through v1, r5- through v1beta1, r5a- through v1alpha1.
const (
	v1Running = "v1-running" // created; its step runs through the rollback
	v1New     = "v1-new"     // created once release 5's controller stopped

	r5Greet    = "r5-greet"    // Task, client-side apply
	r5Done     = "r5-done"     // server-side apply; succeeds
	r5Running  = "r5-running"  // created; its step runs through the rollback
	r5aSleepy  = "r5a-sleepy"  // Task, server-side apply
	r5aRunning = "r5a-running" // server-side apply; its step runs through the rollback
	r5aBuild   = "r5a-build"   // Task, client-side apply
	r5aDone    = "r5a-done"    // client-side apply; succeeds

	// release5RunningSeconds is how long the running runs' step sleeps:
	// long enough to outlast the rest of release 5's part and the
	// rollback on a busy machine (about 10 s).
	release5RunningSeconds = 25
)

// release5InFlight are release 5's runs that have not finished at the rollback.
var release5InFlight = map[string]bool{r5Running: true, r5aRunning: true, v1Running: true, v1New: true}

// release5Outcomes are how each of release 5's runs ends.
var release5Outcomes = map[string]string{
	r5Done: "True/Succeeded", r5Running: "True/Succeeded", r5aRunning: "True/Succeeded", r5aDone: "True/Succeeded",
	v1Done: "True/Succeeded", v1Running: "True/Succeeded", v1New: "True/Succeeded",
}

// createRelease5Objects writes, while release 5's manager runs, objects
// through v1 (writeV1Objects), then Tasks and runs through all three
// versions, the runs in flight first; waits until each run has reached its
// phase, then stops release 5's controller (its webhooks serve on) and
// creates a v1 run that no controller has seen. It returns the views of
// every object then, having checked that each reads as written and that
// the objects written through v1 have managedFields naming it.
func (r *v1Rehearsal) createRelease5Objects() views {
	t := r.t
	r.writeV1Objects()
	sleepy := wrappers.V1alpha1Task(ns, r5aSleepy).Step("wait", "alpine:3", fmt.Sprintf("sleep %d", release5RunningSeconds)).Obj()
	r.apply(serverSide, sleepy, wrappers.V1alpha1TaskRun(ns, r5aRunning, r5aSleepy).Obj())
	build := wrappers.V1alpha1Task(ns, r5aBuild).Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...").Obj()
	r.apply(clientSide, greetTask(r5Greet), build, wrappers.V1alpha1TaskRun(ns, r5aDone, r5aBuild).Obj())
	r.createObjects(
		v1GreetRun(v1Running, v1Greet, "val", release5RunningSeconds, "30m"),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r5Running, r5Greet).Param("name", "rae").Param("pause", fmt.Sprint(release5RunningSeconds)).Timeout(30*time.Minute).Obj()))
	r.apply(serverSide, wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r5Done, r5Greet).Param("name", "dee").TimeoutText("10m").Obj()))

	waitFinished(t, r.c, time.Minute, v1Done, r5Done, r5aDone)
	r.waitRunning(r5Running, r5aRunning, v1Running)
	r.stopController()
	r.createObjects(v1GreetRun(v1New, v1Greet, "nova", 1, "10m"))

	before := r.readViews()
	r.checkWritten("under release 5")
	r.checkFinishedOutcomes(before, release5Outcomes, release5InFlight, "release 5")
	named := r.managedFieldsNaming(minitaskv1.GroupVersion.String())
	for _, key := range []string{"Task/" + v1Greet, "TaskRun/" + v1Done, "TaskRun/" + v1Running, "TaskRun/" + v1New} {
		kind, name, _ := strings.Cut(key, "/")
		if !containsPrefix(named, kind+"/"+ns+"/"+name+":") {
			t.Fatalf("the managedFields of %s, written through v1, do not name it; the rehearsal needs them to. Objects whose do:\n%s",
				key, strings.Join(named, "\n"))
		}
	}
	return before
}

// checkRelease4CRDs checks that release 4's CRDs are what the API server
// holds: v1 is gone (a v1 client gets a 404), and storedVersions is
// [v1beta1], as it was.
func (r *v1Rehearsal) checkRelease4CRDs() {
	// The API server's handler follows the CRD within a moment.
	waitFor(r.t, 30*time.Second, "a v1 read to get a 404", func(ctx context.Context) error {
		err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1Greet}, &minitaskv1.Task{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Task %s through v1: %w", v1Greet, err)
		}
		return nil
	})
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			r.t.Fatal(err)
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, v.Name)
		}
		got := map[string][]string{"versions": versions, "storedVersions": crd.Status.StoredVersions}
		want := map[string][]string{"versions": {"v1alpha1", "v1beta1"}, "storedVersions": {"v1beta1"}}
		if diff := cmp.Diff(want, got); diff != "" {
			r.t.Errorf("CRD %s after the rollback to release 4 (-want +got):\n%s", name, diff)
		}
	}
}

// checkV1EntriesDropped checks that release 4's storage migration said, in
// an Event on each CRD, that it dropped managedFields entries naming v1:
// what docs/upgrading.md has the operator look for after a rollback.
func (r *v1Rehearsal) checkV1EntriesDropped() {
	waitFor(r.t, 30*time.Second, "an Event ManagedFieldsEntriesDropped naming minitask.dev/v1 on each CRD", func(ctx context.Context) error {
		var events corev1.EventList
		if err := r.c.client.List(ctx, &events, client.MatchingFields{"reason": "ManagedFieldsEntriesDropped"}); err != nil {
			return err
		}
		named := map[string]bool{}
		var messages []string
		for _, e := range events.Items {
			messages = append(messages, e.InvolvedObject.Name+": "+e.Message)
			named[e.InvolvedObject.Name] = named[e.InvolvedObject.Name] || strings.Contains(e.Message, "naming minitask.dev/v1)")
		}
		for _, name := range crdNames {
			if !named[name] {
				return fmt.Errorf("none on %s; Events: %q", name, messages)
			}
		}
		return nil
	})
}

// applyV1ObjectsThroughV1beta1 applies, server-side, the v1beta1 manifest of
// each object written through v1, as read now (no change): it fails for an
// object whose managedFields still name v1, which release 4's CRDs no
// longer have (kubernetes/kubernetes#111937), and must not.
func (r *v1Rehearsal) applyV1ObjectsThroughV1beta1() {
	var manifests []map[string]any
	for _, key := range []string{"Task/" + v1Greet, "TaskRun/" + v1Done, "TaskRun/" + v1Running, "TaskRun/" + v1New} {
		kind, name, _ := strings.Cut(key, "/")
		var obj client.Object
		if kind == "Task" {
			obj = r.getBetaTask(name)
		} else {
			obj = r.getBetaRun(name)
		}
		// A user's manifest has no conversion annotation.
		annotations := obj.GetAnnotations()
		delete(annotations, conversionDataAnnotation)
		obj.SetAnnotations(annotations)
		manifests = append(manifests, r.manifestOf(obj))
	}
	r.kubectl("apply", "--server-side", "-f", r.manifestFile("v1-objects-as-v1beta1.yaml", manifests...))
}

// withoutV1Stash compares the conversion annotation of v1alpha1 views as
// JSON without its v1 member: release 4 knows nothing of v1, and its
// v1alpha1 view of an object whose stored form keeps what only v1 says in
// the annotation (a param said to be a string) carries only the rest.
var withoutV1Stash = cmp.FilterPath(func(p cmp.Path) bool {
	f, ok := p.Last().(cmp.StructField)
	root := p.Index(0).Type()
	return ok && f.Name() == "Annotations" &&
		(root == reflect.TypeFor[*v1alpha1.Task]() || root == reflect.TypeFor[*v1alpha1.TaskRun]())
}, cmp.Transformer("withoutV1Stash", func(annotations map[string]string) map[string]any {
	out := make(map[string]any, len(annotations))
	for k, v := range annotations {
		out[k] = v
	}
	var stash map[string]any
	if json.Unmarshal([]byte(annotations[conversionDataAnnotation]), &stash) == nil {
		delete(stash, "v1")
		out[conversionDataAnnotation] = stash
	}
	return out
}))
