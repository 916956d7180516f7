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
// asked by the manager (checkMigratedBy); TestUpgradeFromRelease4's last
// step is the same move on a cluster without it, by the manager. The current manager builds chained Pods
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
