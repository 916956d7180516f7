//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file holds release 4's fixtures: Tasks and TaskRuns written through
// both versions it served, each by one of the three writers a user has
// (kubectl apply --server-side, kubectl apply, a client's update), while its
// own manager ran them; the manifests a user saved of them; and the checks
// once release 5 took over.

// Release 4's objects: r4- written through v1beta1, r4a- through v1alpha1.
const (
	r4Greet   = "r4-greet"   // Task, server-side apply; then a label by an update through v1alpha1
	r4Flaky   = "r4-flaky"   // Task, client-side apply; its second step exits 3
	r4aSleepy = "r4a-sleepy" // Task, server-side apply; its step sleeps through the upgrade
	r4aBuild  = "r4a-build"  // Task, client-side apply
	// r3Task (r3-build): Task, created, then a new description by an update;
	// every field release 3 added

	r4Running  = "r4-running"  // server-side apply; its step runs through the upgrade
	r4Done     = "r4-done"     // client-side apply; then an annotation by an update through v1alpha1
	r4Failed   = "r4-failed"   // created, then a label by an update
	r4New      = "r4-new"      // created once release 4's controller stopped
	r4aRunning = "r4a-running" // server-side apply; its step runs through the upgrade
	r4aDone    = "r4a-done"    // client-side apply
	r4aUpdated = "r4a-updated" // created, then a label by an update

	// release4RunningSeconds is how long the running runs' step sleeps:
	// long enough to outlast the rest of release 4's part and the upgrade
	// on a busy machine (about 10 s).
	release4RunningSeconds = 25
)

// release4InFlight are release 4's runs that have not finished at the upgrade.
var release4InFlight = map[string]bool{r4Running: true, r4New: true, r4aRunning: true}

// release4Outcomes are how each of release 4's runs ends.
var release4Outcomes = map[string]string{
	r4Running:  "True/Succeeded",
	r4Done:     "True/Succeeded",
	r4Failed:   "False/StepFailed",
	r4New:      "True/Succeeded",
	r4aRunning: "True/Succeeded",
	r4aDone:    "True/Succeeded",
	r4aUpdated: "True/Succeeded",
}

// createRelease4Objects writes release 4's Tasks and runs while its manager
// runs, the runs in flight first, waits until each has reached its phase,
// then stops release 4's controller (its webhooks serve on) and creates a
// run that no controller has seen. It returns the views of every object
// then, having checked that each reads as written.
func (r *v1Rehearsal) createRelease4Objects() views {
	t := r.t
	sleepy := wrappers.V1alpha1Task(ns, r4aSleepy).Step("wait", "alpine:3", fmt.Sprintf("sleep %d", release4RunningSeconds)).Obj()
	running := wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r4Running, r4Greet).Param("name", "rue").Param("pause", fmt.Sprint(release4RunningSeconds)).
		Timeout(30*time.Minute).Label("team", "shop").Obj())
	r.apply(serverSide, greetTask(r4Greet), sleepy, running, wrappers.V1alpha1TaskRun(ns, r4aRunning, r4aSleepy).Obj())

	// Updates through v1alpha1 of objects written through v1beta1, with
	// what v1alpha1 cannot express, follow: what they must read as after.
	greet := greetTask(r4Greet)
	greet.Labels = map[string]string{"written-through": "v1alpha1"}
	done := wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r4Done, r4Greet).Param("name", "dot").Param("greeting", "hi").TimeoutText("10m").Obj())
	build := wrappers.V1alpha1Task(ns, r4aBuild).Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...").Obj()
	build.Labels = map[string]string{"team": "shop"}
	r.apply(clientSide,
		wrappers.V1beta1Task(wrappers.Task(ns, r4Flaky).Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...\nexit 3").Obj()),
		build, done, wrappers.V1alpha1TaskRun(ns, r4aDone, r4aBuild).Obj())

	r.createObjects(r3BuildTask(), wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r4Failed, r4Flaky).Obj()), wrappers.V1alpha1TaskRun(ns, r4aUpdated, r4aBuild).Obj())
	r.update(&v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r3Task}}, func(obj client.Object) {
		obj.(*v1beta1.Task).Spec.Description = "Clones, builds and tests the shop"
	})
	r.update(&v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r4Failed}}, func(obj client.Object) {
		obj.SetLabels(map[string]string{"written-by": "update"})
	})
	r.update(&v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r4aUpdated}}, func(obj client.Object) {
		obj.SetLabels(map[string]string{"written-by": "update"})
	})
	r.update(&v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r4Greet}}, func(obj client.Object) {
		obj.SetLabels(greet.Labels)
	})
	waitFinished(t, r.c, time.Minute, r4Done)
	done.Annotations = map[string]string{"note": "written through v1alpha1"}
	r.update(&v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r4Done}}, func(obj client.Object) {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["note"] = done.Annotations["note"]
		obj.SetAnnotations(annotations)
	})
	// Read through v1beta1, as written through it first.
	r.wrote(greet)
	r.wrote(done)

	waitFinished(t, r.c, time.Minute, r4Done, r4Failed, r4aDone, r4aUpdated)
	r.waitRunning(r4Running, r4aRunning)
	r.stopController()
	r.createObjects(wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r4New, r4Greet).Param("name", "nia").Obj()))

	before := r.readViews()
	r.checkWritten("under release 4")
	r.checkFinishedOutcomes(before, release4Outcomes, release4InFlight, "release 4")
	return before
}

// savedManifests are the files `kubectl get -o yaml` wrote of objects,
// through each version, and the objects by kind/name.
type savedManifests struct {
	files   []string
	objects []string
}

// saveManifests saves, as a user of release 4 would, `kubectl get -o yaml`
// of finished objects: through v1alpha1, objects written through v1beta1
// (their conversion annotation holds release 4's stash) and one written
// through v1alpha1; through v1beta1, the Task with every field of release 3
// and a run.
func (r *v1Rehearsal) saveManifests() savedManifests {
	t := r.t
	saved := savedManifests{objects: []string{"Task/" + r4Greet, "TaskRun/" + r4Done, "Task/" + r4aBuild, "Task/" + r3Task, "TaskRun/" + r4Failed}}
	for version, resources := range map[string][]string{
		"v1alpha1": {"tasks.v1alpha1.minitask.dev/" + r4Greet, "taskruns.v1alpha1.minitask.dev/" + r4Done, "tasks.v1alpha1.minitask.dev/" + r4aBuild},
		"v1beta1":  {"tasks.v1beta1.minitask.dev/" + r3Task, "taskruns.v1beta1.minitask.dev/" + r4Failed},
	} {
		out := r.kubectl(append(append([]string{"get"}, resources...), "-n", ns, "-o", "yaml")...)
		path := filepath.Join(t.TempDir(), "release-4-"+version+".yaml")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		saved.files = append(saved.files, path)
		if version != "v1alpha1" {
			continue
		}
		// The rehearsal proves something of release 4's stash only if
		// the saved manifests hold it.
		for _, doc := range yamlDocuments(t, []byte(out)) {
			for _, item := range doc["items"].([]any) {
				meta := item.(map[string]any)["metadata"].(map[string]any)
				stash, _ := field(meta, "annotations", conversionDataAnnotation).(string)
				if wantStash := meta["name"] != r4aBuild; wantStash != strings.Contains(stash, `"v1beta1"`) {
					t.Fatalf("the saved v1alpha1 manifest of %s has conversion annotation %q", meta["name"], stash)
				}
			}
		}
	}
	return saved
}

// reapply applies the saved manifests again, once release 5 runs: first
// with kubectl apply as they are (resourceVersion included: nothing may
// have written these objects since), then with kubectl apply --server-side
// without what kubectl keeps of its own in them, the resourceVersion (the
// first apply moved it on) and the last-applied annotation (which the
// first apply rewrote, and which a second manager may not set to another
// value). Neither may fail, nor change anything of the objects through
// either version but kubectl apply's annotation and managedFields.
func (r *v1Rehearsal) reapply(saved savedManifests, before views) {
	for _, file := range saved.files {
		r.kubectl("apply", "-f", file)
	}
	r.checkSavedUnchanged(saved, before, "after kubectl apply of the manifests saved under release 4")
	for _, file := range saved.files {
		b, err := os.ReadFile(file)
		if err != nil {
			r.t.Fatal(err)
		}
		var items []map[string]any
		for _, doc := range yamlDocuments(r.t, b) {
			for _, item := range doc["items"].([]any) {
				item := item.(map[string]any)
				meta := item["metadata"].(map[string]any)
				delete(meta, "resourceVersion")
				if annotations, ok := meta["annotations"].(map[string]any); ok {
					delete(annotations, lastAppliedAnnotation)
				}
				items = append(items, item)
			}
		}
		r.kubectl("apply", "--server-side", "-f", r.manifestFile("again-"+filepath.Base(file), items...))
	}
	r.checkSavedUnchanged(saved, before, "after kubectl apply --server-side of the manifests saved under release 4")
}

// checkSavedUnchanged checks that the saved objects read through v1alpha1
// and v1beta1 as in before, but for what kubectl apply writes of its own
// (its annotation, managedFields) and the resourceVersion.
func (r *v1Rehearsal) checkSavedUnchanged(saved savedManifests, before views, when string) {
	before, now := withoutLastApplied(before), withoutLastApplied(r.getViews())
	for _, key := range saved.objects {
		kind, name, _ := strings.Cut(key, "/")
		if kind == "Task" {
			compareAll(r.rehearsal, kind, "v1alpha1", pick(before.alphaTasks, name), now.alphaTasks, when, ignoreWrites)
			compareAll(r.rehearsal, kind, "v1beta1", pick(before.betaTasks, name), now.betaTasks, when, ignoreWrites)
		} else {
			compareAll(r.rehearsal, kind, "v1alpha1", pick(before.alphaRuns, name), now.alphaRuns, when, ignoreWrites)
			compareAll(r.rehearsal, kind, "v1beta1", pick(before.betaRuns, name), now.betaRuns, when, ignoreWrites)
		}
	}
}

// withoutLastApplied is a copy of v without kubectl apply's annotation.
func withoutLastApplied(v views) views {
	return views{
		alphaTasks: withoutAnnotation(v.alphaTasks, lastAppliedAnnotation), alphaRuns: withoutAnnotation(v.alphaRuns, lastAppliedAnnotation),
		betaTasks: withoutAnnotation(v.betaTasks, lastAppliedAnnotation), betaRuns: withoutAnnotation(v.betaRuns, lastAppliedAnnotation),
	}
}

// withoutAnnotation is a copy of objs without annotation key.
func withoutAnnotation[T any, PT interface {
	*T
	metav1.Object
	DeepCopy() PT
}](objs map[string]*T, key string) map[string]*T {
	out := make(map[string]*T, len(objs))
	for name, obj := range objs {
		c := PT(obj).DeepCopy()
		annotations := c.GetAnnotations()
		delete(annotations, key)
		if len(annotations) == 0 {
			annotations = nil
		}
		c.SetAnnotations(annotations)
		out[name] = c
	}
	return out
}

// pick is the map of m's one entry name.
func pick[T any](m map[string]*T, name string) map[string]*T {
	return map[string]*T{name: m[name]}
}
