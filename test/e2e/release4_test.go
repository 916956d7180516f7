//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestUpgradeFromRelease4 rehearses the upgrade from release 4 to release 5,
// which serves v1 beside v1alpha1 and v1beta1 and stores v1beta1 still
// (API.md, "Releases 5 and 6"): release 4's CRDs and its real manager,
// built from git history (frozen_release_test.go); Tasks and runs written
// through both versions it served by each kind of writer
// (release4_objects_test.go), runs in flight, and manifests a user saved of
// them; then release 5's CRDs and real manager, as it shipped. Every run in flight must finish
// once through the Pod it had, every object read the same through
// v1alpha1 and v1beta1 and as its v1beta1 view through v1, keep its
// managedFields, and be stored as v1beta1 still; the saved manifests must
// apply again, changing nothing. Then objects are written through v1
// (v1_objects_test.go), and what only release 6 can run is refused. Last,
// the train's next step: the current tree, release 6, which must move
// everything to v1 with every object reading as before through every
// version, managedFields kept (4 → 5 → 6).
func TestUpgradeFromRelease4(t *testing.T) {
	t.Parallel()
	// The current manager moves storage itself, as newRehearsal's do.
	r := newV1RehearsalOn(t, "upgrade-4", []clusterOption{withoutStorageVersionMigration}, release4, release5)
	// The runs in flight must outlast the upgrade, not the build of
	// release 5's manager: it is built before they start.
	release5.build(t)
	r.installRelease(release4, views{}, nil)
	r.lap("install release 4")
	before := r.createRelease4Objects()
	saved := r.saveManifests()
	r.lap("release 4")

	r.installRelease(release5, before, release4InFlight, r.runningPods(r4Running, r4aRunning)...)
	r.lap("upgrade to release 5")
	r.checkRunsFinished(release4Outcomes, 2*release4RunningSeconds*time.Second, "of release 4, after the upgrade")
	r.checkRunPods(r4Running, r4aRunning, r4New)
	r.checkViewsKept(before, release4InFlight, "after the upgrade from release 4, listed")
	r.compareViewsKept(before, r.getViews(), release4InFlight, "after the upgrade from release 4, read one by one")
	r.checkNotRewritten(before, "after the upgrade from release 4")
	r.checkManagedFieldsKept(before, release4InFlight, "after the upgrade from release 4")
	r.checkWritten("after the upgrade from release 4")
	r.checkV1Views("after the upgrade from release 4")
	r.checkManagerLog("after the upgrade from release 4")
	r.checkPods()
	r.checkStorageMigrated(frozenStorage)
	r.lap("runs in flight finished")

	r.reapply(saved, before)
	r.lap("saved manifests applied again")

	r.writeV1Objects()
	r.checkRefusedForRelease6()
	r.checkWritten("after writes through v1")
	r.checkV1Views("after writes through v1")
	r.checkManagerLog("after writes through v1")
	r.checkPods()
	r.checkStorageMigrated(frozenStorage)
	r.lap("objects through v1")

	// On to now, as the train goes: everything release 4 and 5 wrote moves
	// to v1, by the manager's own migration (the cluster does not serve
	// the platform's), and reads as before, through every version.
	underRelease5 := r.readViews()
	r.upgradeToCurrent(underRelease5, nil)
	r.checkStorageMigrated(currentStorage)
	r.checkMigratedBy(byManager)
	r.checkEverythingKept(underRelease5, nil, "after the upgrade from release 5 to now")
	r.lap("upgrade to now")
	r.report("release 4 → 5 → now")
}

// v1Rehearsal carries what the rehearsals of releases 5 and 6 share: the
// objects as each was last written, through its version.
type v1Rehearsal struct {
	*rehearsal
	// written are the objects as each was last written, by kind/name, each
	// in the version (Go type) it was written through.
	written map[string]client.Object
	// v1Checked counts the objects checkV1Views read through v1.
	v1Checked int
}

// newV1Rehearsal creates cluster e2e-NAME with no minitask installed, and
// starts building the managers of releases meanwhile.
func newV1Rehearsal(t *testing.T, name string, releases ...*frozenRelease) *v1Rehearsal {
	return newV1RehearsalOn(t, name, nil, releases...)
}

// newV1RehearsalOn is newV1Rehearsal on a cluster created with opts.
func newV1RehearsalOn(t *testing.T, name string, opts []clusterOption, releases ...*frozenRelease) *v1Rehearsal {
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, release := range releases {
		release.prefetch(repo)
	}
	opts = append([]clusterOption{withoutMinitask}, opts...)
	return &v1Rehearsal{rehearsal: newRehearsalOn(t, name, opts...), written: map[string]client.Object{}}
}

// report writes what the rehearsal checked to the test log.
func (r *v1Rehearsal) report(what string) {
	all := r.readViews()
	byVersion := map[string][]string{}
	for _, key := range slices.Sorted(maps.Keys(r.written)) {
		version := fmt.Sprintf("%T", r.written[key])
		version = version[1:strings.Index(version, ".")]
		byVersion[version] = append(byVersion[version], key)
	}
	outcomes := map[string]int{}
	for _, run := range all.betaRuns {
		outcomes[betaOutcome(run)]++
	}
	r.t.Logf("%s rehearsal report:\n  written, by version: %v\n  TaskRuns by outcome: %v\n  checked: %d objects through v1alpha1 and v1beta1 "+
		"(listed and read one by one), %d object reads through v1; %d Pods, one per run that needs one\n  etcd: %v; storedVersions of both CRDs: [%s]\n  %s",
		what, byVersion, outcomes, len(all.betaTasks)+len(all.betaRuns), r.v1Checked, r.pods, r.stored, r.storage, r.timesLine())
}

// runningPods are the Pods of the named runs, as their status names them.
func (r *v1Rehearsal) runningPods(names ...string) []string {
	pods := make([]string, len(names))
	for i, name := range names {
		if pods[i] = r.getBetaRun(name).Status.PodName; pods[i] == "" {
			r.t.Fatalf("TaskRun %s, which should be running, names no Pod", name)
		}
	}
	return pods
}

// checkNotRewritten checks that the Tasks and finished runs of before were
// not written since (their resourceVersion is the same): a release taking
// over must not write them.
func (r *v1Rehearsal) checkNotRewritten(before views, when string) {
	now := r.readVersions(false, true)
	var rewritten []string
	for name, task := range before.betaTasks {
		if now.betaTasks[name] == nil || now.betaTasks[name].ResourceVersion != task.ResourceVersion {
			rewritten = append(rewritten, "Task/"+name)
		}
	}
	for name, run := range before.betaRuns {
		if !betaFinished(run) {
			continue
		}
		if now.betaRuns[name] == nil || now.betaRuns[name].ResourceVersion != run.ResourceVersion {
			rewritten = append(rewritten, "TaskRun/"+name)
		}
	}
	slices.Sort(rewritten)
	if len(rewritten) > 0 {
		r.t.Errorf("%s, objects written since (their resourceVersion changed): %v", when, rewritten)
	}
}

// waitRunning waits until the named runs run a step.
func (r *v1Rehearsal) waitRunning(names ...string) {
	want := map[string]v1beta1.TaskRunReason{}
	for _, name := range names {
		want[name] = v1beta1.ReasonRunning
	}
	r.waitReason(want)
}

// checkRunPods checks that the Pod of each named run, as its status names
// it, has ended Succeeded and still serves every step's log: in the local
// cluster, kwok's (hack/kwok/step.log) for each container.
func (r *v1Rehearsal) checkRunPods(runs ...string) {
	t := r.t
	lines := len(strings.Split(strings.TrimSpace(readStepLog(t, r.c)), "\n"))
	for _, run := range runs {
		pod := &corev1.Pod{}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: r.getBetaRun(run).Status.PodName}, pod); err != nil {
			t.Errorf("reading the Pod of TaskRun %s: %v", run, err)
			continue
		}
		if pod.Status.Phase != corev1.PodSucceeded {
			t.Errorf("Pod %s of TaskRun %s is %s, want Succeeded", pod.Name, run, pod.Status.Phase)
		}
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			out := r.kubectl("logs", "-n", ns, pod.Name, "-c", c.Name)
			if got := len(strings.Split(strings.TrimSpace(out), "\n")); got != lines || !strings.Contains(out, "(kwok)") {
				t.Errorf("the log of container %s of Pod %s (TaskRun %s) has %d lines, want kwok's %d:\n%s", c.Name, pod.Name, run, got, lines, out)
			}
		}
	}
}
