//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what an upgrade must keep: every object reads the same
// afterwards in every version that served it, and every Pod that ran stays.

// conversionDataAnnotation is where conversion keeps, in a v1alpha1 view, the
// v1beta1 fields that v1alpha1 cannot express (API.md, "Conversion").
const conversionDataAnnotation = "minitask.dev/conversion-data"

// views are the minitask objects in ns, by name, as read through each
// version; the maps of a version that a release did not serve are nil.
type views struct {
	alphaTasks map[string]*v1alpha1.Task
	alphaRuns  map[string]*v1alpha1.TaskRun
	betaTasks  map[string]*v1beta1.Task
	betaRuns   map[string]*v1beta1.TaskRun
}

// readViews lists every minitask object in ns through v1alpha1 and v1beta1.
func (r *rehearsal) readViews() views {
	r.t.Helper()
	return r.readVersions(true, true)
}

// readVersions lists every minitask object in ns through v1alpha1 if alpha,
// through v1beta1 if beta.
func (r *rehearsal) readVersions(alpha, beta bool) views {
	r.t.Helper()
	var v views
	list := func(l client.ObjectList) {
		if err := r.c.client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			r.t.Fatalf("listing %T: %v", l, err)
		}
	}
	if alpha {
		var tasks v1alpha1.TaskList
		var runs v1alpha1.TaskRunList
		list(&tasks)
		list(&runs)
		v.alphaTasks, v.alphaRuns = byName(tasks.Items), byName(runs.Items)
	}
	if beta {
		var tasks v1beta1.TaskList
		var runs v1beta1.TaskRunList
		list(&tasks)
		list(&runs)
		v.betaTasks, v.betaRuns = byName(tasks.Items), byName(runs.Items)
	}
	return v
}

// getViews reads every minitask object in ns through v1alpha1 and v1beta1,
// one GET each. A GET reads etcd and is converted by the manager serving
// now; a LIST (readViews) is served from the API server's watch cache,
// whose objects were converted when they were cached: by the manager that
// served when the CRDs last changed, until each object is written again.
// After an upgrade or a rollback (the new CRDs are applied while the old
// manager serves), only GETs show what the new manager's conversion gives
// of objects not written since.
func (r *rehearsal) getViews() views {
	r.t.Helper()
	// v1beta1 is stored: its LIST converts nothing.
	names := r.readVersions(false, true)
	v := views{alphaTasks: map[string]*v1alpha1.Task{}, alphaRuns: map[string]*v1alpha1.TaskRun{},
		betaTasks: map[string]*v1beta1.Task{}, betaRuns: map[string]*v1beta1.TaskRun{}}
	for name := range names.betaTasks {
		v.alphaTasks[name], v.betaTasks[name] = r.getAlphaTask(name), r.getBetaTask(name)
	}
	for name := range names.betaRuns {
		v.alphaRuns[name], v.betaRuns[name] = r.getAlphaRun(name), r.getBetaRun(name)
	}
	return v
}

// byName indexes a list's items by name.
func byName[T any, PT interface {
	*T
	GetName() string
}](items []T) map[string]*T {
	m := make(map[string]*T, len(items))
	for i := range items {
		m[PT(&items[i]).GetName()] = &items[i]
	}
	return m
}

// ignoreWrites leaves out of a comparison what every write changes, a
// storage migration's included.
var ignoreWrites = cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "ManagedFields")

// ignoreTypeMeta leaves out apiVersion and kind, which a list fills in and a
// Get does not.
var ignoreTypeMeta = cmpopts.IgnoreTypes(metav1.TypeMeta{})

// checkViewsUnchanged checks that every object reads exactly as before in
// each version that served it before, resourceVersion and managedFields
// included: what an upgrade's new CRDs must give while nothing has written
// the objects since (the new manager not yet started). The versions that
// did not serve them are not read: without the new manager's conversion
// webhook, they may not read at all.
func (r *rehearsal) checkViewsUnchanged(before views, when string) {
	r.t.Helper()
	now := r.readVersions(before.alphaTasks != nil, before.betaTasks != nil)
	compareAll(r, "Task", "v1alpha1", before.alphaTasks, now.alphaTasks, when)
	compareAll(r, "TaskRun", "v1alpha1", before.alphaRuns, now.alphaRuns, when)
	compareAll(r, "Task", "v1beta1", before.betaTasks, now.betaTasks, when)
	compareAll(r, "TaskRun", "v1beta1", before.betaRuns, now.betaRuns, when)
}

// compareAll compares each object of before with the one of the same name
// in now. Lists fill in apiVersion and kind, a Get does not: they are left
// out of the comparison.
func compareAll[T any](r *rehearsal, kind, version string, before, now map[string]*T, when string, opts ...cmp.Option) {
	r.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if diff := cmp.Diff(before[name], now[name], append(opts, ignoreTypeMeta)...); diff != "" {
			r.t.Errorf("%s view of %s %s %s (-before +now):\n%s", version, kind, name, when, diff)
		}
	}
}

// checkViewsKept compares, once the runs in flight at an upgrade have
// finished, every object's views with those before the upgrade, in each
// version of before (those that served it then). Tasks and finished runs must read the same
// but for resourceVersion and managedFields: nothing may write them. Runs
// in flight legitimately progress: their spec and metadata must not change,
// but for the conversion annotation of their v1alpha1 view, which holds the
// v1beta1 status v1alpha1 cannot show; their status must keep what was
// recorded (podName, startTime) and end Succeeded. opts are the rehearsal's
// own allowances, for every comparison.
func (r *rehearsal) checkViewsKept(before views, inFlight map[string]bool, when string, opts ...cmp.Option) {
	r.t.Helper()
	r.compareViewsKept(before, r.readVersions(before.alphaTasks != nil, before.betaTasks != nil), inFlight, when, opts...)
}

// compareViewsKept is checkViewsKept with the views now, read by the caller.
func (r *rehearsal) compareViewsKept(before, now views, inFlight map[string]bool, when string, opts ...cmp.Option) {
	t := r.t
	t.Helper()
	opts = append(opts, ignoreWrites, ignoreTypeMeta)
	compareAll(r, "Task", "v1alpha1", before.alphaTasks, now.alphaTasks, when, opts...)
	compareAll(r, "Task", "v1beta1", before.betaTasks, now.betaTasks, when, opts...)

	for _, name := range slices.Sorted(maps.Keys(before.alphaRuns)) {
		want, got := before.alphaRuns[name].DeepCopy(), now.alphaRuns[name].DeepCopy()
		if got != nil && inFlight[name] {
			for _, run := range []*v1alpha1.TaskRun{want, got} {
				delete(run.Annotations, conversionDataAnnotation)
				if len(run.Annotations) == 0 {
					run.Annotations = nil
				}
			}
			s := got.Status
			if s.FinishTime == nil || s.StartTime == nil || s.FinishTime.Before(s.StartTime) || s.PodName == "" {
				t.Errorf("v1alpha1 TaskRun %s %s: podName %q, startTime %v, finishTime %v: want all, in order",
					name, when, s.PodName, s.StartTime, s.FinishTime)
			}
			want.Status.Phase, want.Status.FinishTime = v1alpha1.TaskRunPhaseSucceeded, s.FinishTime
			if want.Status.PodName == "" {
				want.Status.PodName = s.PodName
			}
			if want.Status.StartTime == nil {
				want.Status.StartTime = s.StartTime
			}
		}
		if diff := cmp.Diff(want, got, opts...); diff != "" {
			t.Errorf("v1alpha1 view of TaskRun %s %s (-want +got):\n%s", name, when, diff)
		}
	}

	for _, name := range slices.Sorted(maps.Keys(before.betaRuns)) {
		want, got := before.betaRuns[name].DeepCopy(), now.betaRuns[name]
		if got != nil && inFlight[name] {
			s := got.Status
			if betaOutcome(got) != "True/Succeeded" || s.StartTime == nil || s.CompletionTime == nil || s.PodName == "" {
				t.Errorf("v1beta1 TaskRun %s %s: %s, podName %q, startTime %v, completionTime %v: want True/Succeeded and all three",
					name, when, betaOutcome(got), s.PodName, s.StartTime, s.CompletionTime)
			}
			// What the run's progress writes; the rest must stay. From
			// release 7 that includes the spec it pinned at its Pod
			// (status.taskSpec), which v1beta1 carries in the annotation.
			want.Status.Conditions, want.Status.CompletionTime, want.Status.Steps = s.Conditions, s.CompletionTime, s.Steps
			got = got.DeepCopy()
			for _, run := range []*v1beta1.TaskRun{want, got} {
				run.Annotations = withoutPinnedSpec(t, run.Annotations)
			}
			if want.Status.PodName == "" {
				want.Status.PodName = s.PodName
			}
			if want.Status.StartTime == nil {
				want.Status.StartTime = s.StartTime
			}
		}
		if diff := cmp.Diff(want, got, opts...); diff != "" {
			t.Errorf("v1beta1 view of TaskRun %s %s (-want +got):\n%s", name, when, diff)
		}
	}
}

// checkManagedFieldsKept checks that every object of before has the
// managedFields it had then, but for the entries of the runs in flight's
// status (their controller wrote on) and those naming a version of
// dropped (an apiVersion), which no longer served, the storage migration
// drops.
func (r *rehearsal) checkManagedFieldsKept(before views, inFlight map[string]bool, when string, dropped ...string) {
	r.t.Helper()
	now := r.readVersions(false, true)
	kept := func(name string, entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
		return slices.DeleteFunc(slices.Clone(entries), func(e metav1.ManagedFieldsEntry) bool {
			return slices.Contains(dropped, e.APIVersion) || inFlight[name] && e.Subresource == "status"
		})
	}
	check := func(kind, name string, want, got []metav1.ManagedFieldsEntry) {
		if diff := cmp.Diff(kept(name, want), kept(name, got), cmpopts.EquateEmpty()); diff != "" {
			r.t.Errorf("managedFields of %s %s %s (-before +now):\n%s", kind, name, when, diff)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before.betaTasks)) {
		if task := now.betaTasks[name]; task != nil {
			check("Task", name, before.betaTasks[name].ManagedFields, task.ManagedFields)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before.betaRuns)) {
		if run := now.betaRuns[name]; run != nil {
			check("TaskRun", name, before.betaRuns[name].ManagedFields, run.ManagedFields)
		}
	}
}

// recordPods notes, before an upgrade, the Pods every run has: each must be
// kept (same UID) and no run may get another; each run in flight that has
// none must get exactly one, named by the controller's rule.
func (r *rehearsal) recordPods(inFlight map[string]bool) {
	t := r.t
	byRun, err := podsByRun(context.Background(), r.c)
	if err != nil {
		t.Fatal(err)
	}
	for run, pods := range byRun {
		r.wantPods[run] = podNames(pods)
		for _, pod := range pods {
			r.keptPods[pod.Name] = string(pod.UID)
		}
	}
	for run := range inFlight {
		if len(byRun[run]) == 0 {
			r.wantPods[run] = []string{runstate.PodName(runNamed(run))}
		}
	}
}

// checkPods checks that every run has the Pods recordPods and the steps
// since said it should: the Pods of earlier releases are kept and tracked,
// finished runs get none, the others one each.
func (r *rehearsal) checkPods() {
	t := r.t
	byRun, err := podsByRun(context.Background(), r.c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	uids := map[string]string{}
	for run, pods := range byRun {
		got[run] = podNames(pods)
		for _, pod := range pods {
			uids[pod.Name] = string(pod.UID)
		}
	}
	r.pods = len(uids)
	if diff := cmp.Diff(r.wantPods, got); diff != "" {
		t.Errorf("Pods by the TaskRun that controls them (-want +got):\n%s", diff)
	}
	for _, name := range slices.Sorted(maps.Keys(r.keptPods)) {
		if uids[name] != r.keptPods[name] {
			t.Errorf("Pod %s, made before an upgrade, has UID %q, want %q: it was replaced", name, uids[name], r.keptPods[name])
		}
	}
}

// withoutPinnedSpec returns annotations without the pinned spec
// (status.taskSpec) in the conversion annotation's v1 member, and without
// the annotation if nothing else is left in it.
func withoutPinnedSpec(t testing.TB, annotations map[string]string) map[string]string {
	text, ok := annotations[conversionDataAnnotation]
	if !ok {
		return annotations
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(text), &data); err != nil {
		t.Fatalf("the conversion annotation %q: %v", text, err)
	}
	if v1, ok := data["v1"].(map[string]any); ok {
		if status, ok := v1["status"].(map[string]any); ok {
			delete(status, "taskSpec")
			if len(status) == 0 {
				delete(v1, "status")
			}
		}
		if len(v1) == 0 {
			delete(data, "v1")
		}
	}
	out := maps.Clone(annotations)
	if len(data) == 0 {
		delete(out, conversionDataAnnotation)
	} else {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		out[conversionDataAnnotation] = string(b)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
