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

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestUpgradeFromRelease5 rehearses the upgrade from release 5 to the
// current tree, release 6, which stores v1 (API.md, "Releases 5 and 6"):
// release 5's CRDs and its real manager, built from git history
// (frozen_release_test.go); objects written through all three versions it
// served, runs in flight and a v1 run no controller saw
// (createRelease5Objects), all stored as v1beta1; then the current CRDs and
// manager. The runs in flight must finish once, through the Pod each had;
// every object must read as before through v1alpha1 and v1beta1 (listed and
// one GET each), through v1 as its v1beta1 view, and as written through
// the version it was written through; the storage migration must have
// rewritten every object, managedFields kept, so that etcd holds each as v1
// and storedVersions is [v1]. The cluster serves the platform's storage
// version migration (Kubernetes 1.37), so the platform must have done it,
// asked by the manager (checkMigratedBy); TestRollbackToRelease5's roll
// forward is the same move on a cluster without it, by the manager. The current manager builds chained Pods
// (--pod-shape=chained, the default since release 7): release 5's
// runs in flight must end through their init containers with the right
// status.steps, and the run release 5 never started must get a chained Pod.
// Then the chained shape is turned off while chained Pods run
// (rehearseShapeRollback). Then release 4's install is applied over it, as
// docs/upgrading.md says not to: the API server must refuse release 4's
// CRDs, and nothing may change.
func TestUpgradeFromRelease5(t *testing.T) {
	t.Parallel()
	r := newV1Rehearsal(t, "upgrade-5", release5, release4)
	// The runs in flight must outlast the upgrade, not the build of
	// release 5's manager: it is built before they start.
	release5.build(t)
	r.installRelease(release5, views{}, nil)
	r.lap("install release 5")
	before := r.createRelease5Objects()
	r.checkV1Views("under release 5")
	r.checkStorageMigrated(frozenStorage)
	r.lap("release 5")

	r.currentArgs = []string{chainedShape}
	r.upgradeToCurrent(before, release5InFlight, r.runningPods(r5Running, r5aRunning, v1Running)...)
	r.lap("upgrade to release 6")
	r.checkRunsFinished(release5Outcomes, 2*release5RunningSeconds*time.Second, "of release 5, after the upgrade to release 6")
	r.checkRunPods(r5Running, r5aRunning, v1Running, v1New)
	r.checkStepsAndShapes(release5RunSteps, release5RunChained, "release 5's runs, after the upgrade to release 6 building chained Pods")
	r.checkStorageMigrated(currentStorage)
	r.checkMigratedBy(byPlatform)
	r.checkRewritten(before, "after the upgrade to release 6")
	r.checkEverythingKept(before, release5InFlight, "after the upgrade to release 6")
	r.lap("runs in flight finished")

	r.rehearseShapeRollback()
	r.checkPods()
	r.lap("chained Pods in flight, the shape turned off")

	r.checkRollbackToRelease4Refused()
	r.lap("release 4 refused")
	r.report("release 5 → 6 (chained Pods) → 6 (init containers), then 6 → 4 refused")
}

// TestRollbackToRelease5 rehearses the rollback from the current tree
// (release 6, which stores v1) to release 5, as docs/upgrading.md tells an
// operator to roll back, and the roll forward after it. Objects are written
// through all three versions, with runs in flight and a v1 run no
// controller saw (createRelease5Objects), all stored as v1; then release
// 5's CRDs and real manager are installed. The API server must take release
// 5's CRDs (they have v1, which storedVersions lists); release 5's storage
// migration must move every object back to v1beta1 and trim storedVersions
// to [v1beta1]; the runs in flight must finish once; every object must read
// through every version as before, managedFields kept (release 5 serves
// v1: no entry is dropped). A run that only release 6 can run (an array
// param), written under release 6 but never started, must wait Pending under
// release 5, its message naming release 6, with no Pod
// (release6_typed_test.go). Rolled forward, the current release must move
// them to v1 again, every object reading as before, and run that run. The
// cluster does not serve the platform's storage version migration, as
// Kubernetes 1.30 to 1.36 do not: the roll forward is the release 5 → 6
// storage move by the manager's own migration (checkMigratedBy), where
// TestUpgradeFromRelease5's is the platform's.
func TestRollbackToRelease5(t *testing.T) {
	t.Parallel()
	r := newV1RehearsalOn(t, "rollback-5", []clusterOption{withoutStorageVersionMigration}, release5)
	// Release 5 reads only init containers: the current manager builds
	// them, as docs/upgrading.md has an operator do before going back to
	// release 5, a rollback by two releases from release 7.
	r.currentArgs = []string{initContainersShape}
	// The runs in flight must outlast the rollback, not the build of
	// release 5's manager: it is built before they start.
	release5.build(t)
	r.upgradeToCurrent(views{}, nil)
	r.lap("install release 6")
	before := r.createRelease5Objects()
	r.createRelease6Only()
	r.checkV1Views("under release 6")
	r.checkStorageMigrated(currentStorage)
	r.lap("release 6")

	r.installRelease(release5, before, release5InFlight, r.runningPods(r5Running, r5aRunning, v1Running)...)
	r.checkRelease5CRDs()
	r.checkRelease6OnlyWaits()
	r.lap("rollback to release 5")
	r.checkRunsFinished(release5Outcomes, 2*release5RunningSeconds*time.Second, "after the rollback to release 5")
	r.checkRunPods(r5Running, r5aRunning, v1Running, v1New)
	r.checkStorageMigrated(frozenStorage)
	r.checkViewsKept(before, release5InFlight, "after the rollback to release 5, listed")
	r.compareViewsKept(before, r.getViews(), release5InFlight, "after the rollback to release 5, read one by one")
	r.checkManagedFieldsKept(before, release5InFlight, "after the rollback to release 5")
	r.checkWritten("after the rollback to release 5")
	r.checkV1Views("after the rollback to release 5")
	// Release 5's controller logs it as an error when its storage
	// migration rewrites a run it is about to start (v1New), and tries
	// again: the run still gets one Pod (checkPods). Release 6 waits for
	// the rewrite's event instead, quietly.
	r.checkManagerLog("after the rollback to release 5", "changed since the cache read it (resourceVersion")
	r.checkPods()
	r.lap("runs in flight finished")

	r.upgradeToCurrent(r.readViews(), nil)
	r.checkRelease6OnlyRan()
	r.checkStorageMigrated(currentStorage)
	r.checkMigratedBy(byManager)
	r.checkEverythingKept(before, release5InFlight, "after the roll forward to release 6")
	r.lap("roll forward to release 6")
	r.report("release 6 → 5 → 6")
}

// checkEverythingKept checks, after a release's step, that every object of
// before reads as it did through every version, listed and one by one,
// keeps its managedFields, and reads as written through the version it was
// written through and through v1; that the manager logged no error; and
// that every run has the Pods it should.
func (r *v1Rehearsal) checkEverythingKept(before views, inFlight map[string]bool, when string) {
	r.t.Helper()
	r.checkViewsKept(before, inFlight, when+", listed")
	r.compareViewsKept(before, r.getViews(), inFlight, when+", read one by one")
	r.checkManagedFieldsKept(before, inFlight, when)
	r.checkWritten(when)
	r.checkV1Views(when)
	r.checkManagerLog(when)
	r.checkPods()
}

// checkRewritten checks that every object of before was written since (its
// resourceVersion changed): with etcd holding each in the new storage
// version, what the storage migration did. The runs in flight were written
// anyway, by their controller.
func (r *v1Rehearsal) checkRewritten(before views, when string) {
	now := r.readVersions(false, true)
	var kept []string
	for _, name := range slices.Sorted(maps.Keys(before.betaTasks)) {
		if now.betaTasks[name] != nil && now.betaTasks[name].ResourceVersion == before.betaTasks[name].ResourceVersion {
			kept = append(kept, "Task/"+name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before.betaRuns)) {
		if now.betaRuns[name] != nil && now.betaRuns[name].ResourceVersion == before.betaRuns[name].ResourceVersion {
			kept = append(kept, "TaskRun/"+name)
		}
	}
	if len(kept) > 0 {
		r.t.Errorf("%s, objects the storage migration did not rewrite (their resourceVersion is the same): %v", when, kept)
	}
}

// checkRelease5CRDs checks that release 5's CRDs are what the API server
// holds after the rollback: v1, v1alpha1 and v1beta1 served, v1beta1 the
// storage version, and v1 still read.
func (r *v1Rehearsal) checkRelease5CRDs() {
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			r.t.Fatal(err)
		}
		got := map[string]string{}
		for _, v := range crd.Spec.Versions {
			got[v.Name] = fmt.Sprintf("served %t, storage %t, deprecated %t", v.Served, v.Storage, v.Deprecated)
		}
		want := map[string]string{
			"v1":       "served true, storage false, deprecated false",
			"v1alpha1": "served true, storage false, deprecated true",
			"v1beta1":  "served true, storage true, deprecated false",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			r.t.Errorf("versions of CRD %s after the rollback to release 5 (-want +got):\n%s", name, diff)
		}
	}
	if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v1Greet}, &minitaskv1.Task{}); err != nil {
		r.t.Errorf("reading Task %s through v1 after the rollback to release 5: %v", v1Greet, err)
	}
}

// storedVersionRefusal is what the API server says of a CRD that lacks a
// version its storedVersions lists, v1 here: docs/upgrading.md quotes it.
const storedVersionRefusal = `status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, ` +
	`and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions`

// checkRollbackToRelease4Refused applies release 4's install over release
// 6, twice: a server-side dry run, as docs/upgrading.md has an operator
// check a rollback first, then for real. The API server must refuse both
// CRDs each time, in the words the docs quote (release 4's CRDs lack v1,
// which storedVersions lists), and change neither them nor any object. The
// real apply goes on with the file's other objects (its webhook
// configuration), as the docs warn; the current install is applied again
// after it, as an operator who meets the refusal goes back.
func (r *v1Rehearsal) checkRollbackToRelease4Refused() {
	t := r.t
	tree, _ := release4.build(t)
	install := renderRelease(t, r.c, tree, release4.crds())
	crdsBefore := r.crdStates()
	before := r.readViews()
	for _, dryRun := range []bool{true, false} {
		args := []string{"apply", "--server-side", "-f", install}
		if dryRun {
			args = append(args, "--dry-run=server")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := r.c.runKubectl(ctx, args...)
		cancel()
		if err == nil {
			t.Fatalf("kubectl %s: release 4's install was taken over release 6:\n%s", strings.Join(args, " "), out)
		}
		for _, name := range crdNames {
			if want := fmt.Sprintf("%q is invalid: %s", name, storedVersionRefusal); !strings.Contains(out, want) {
				t.Errorf("kubectl %s printed no refusal of CRD %s saying %s:\n%s", strings.Join(args, " "), name, storedVersionRefusal, out)
			}
		}
		if !dryRun && !strings.Contains(out, "validatingwebhookconfiguration.admissionregistration.k8s.io/") {
			t.Errorf("kubectl %s applied no webhook configuration after refusing the CRDs; docs/upgrading.md says it does:\n%s", strings.Join(args, " "), out)
		}
		t.Logf("kubectl %s, refused as it must be:\n%s", strings.Join(args, " "), out)
		if diff := cmp.Diff(crdsBefore, r.crdStates()); diff != "" {
			t.Errorf("the CRDs after release 4's install was refused (dry run %t) (-before +after):\n%s", dryRun, diff)
		}
		r.checkViewsUnchanged(before, fmt.Sprintf("after release 4's install was refused (dry run %t)", dryRun))
	}
	r.kubectl("apply", "--server-side", "-f", r.c.env["MINITASK_MANIFESTS"])
	r.checkV1Views("after release 4's install was refused")
	r.checkStorageMigrated(currentStorage)
}

// crdStates are what an apply could change of each CRD: its resourceVersion,
// versions and storedVersions, by name.
func (r *v1Rehearsal) crdStates() map[string]string {
	states := map[string]string{}
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			r.t.Fatal(err)
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, fmt.Sprintf("%s(served %t, storage %t)", v.Name, v.Served, v.Storage))
		}
		states[name] = fmt.Sprintf("resourceVersion %s, versions %v, storedVersions %v",
			crd.ResourceVersion, versions, crd.Status.StoredVersions)
	}
	return states
}
