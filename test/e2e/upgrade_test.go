//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestUpgradeFromFirstRelease rehearses the upgrades from the first release
// to release 2 to now, each with objects in every phase and runs in flight:
// the first release's objects (first_release_test.go), its running run's
// Pod running through both upgrades; release 2's CRDs and its real manager,
// built from git history (frozen_release_test.go), which must take them over and
// migrate their storage; release 2's own objects, written through both
// versions it served (release2_objects_test.go); then the current CRDs and
// manager. Every object must read the same in every version that served it,
// no finished run run again, every run in flight finish, and etcd hold only
// v1beta1. Then v1beta1 objects are written to through v1alpha1.
func TestUpgradeFromFirstRelease(t *testing.T) {
	t.Parallel()
	r := newRehearsal(t, "upgrade", release2)
	r.installFirstRelease()
	// The first release's running Pod must outlast the upgrade to release 2,
	// not the build of release 2's manager: with a cold Go build cache on a
	// busy machine that takes longer than the Pod's step sleeps.
	release2.build(t)
	r.createFirstReleaseObjects()
	r.lap("first release")

	r.installRelease(release2, r.firstReleaseViews(), firstReleaseInFlight, runningPod)
	r.lap("upgrade to release 2")
	// Release 2 runs the first release's new and pending runs, and migrates
	// the storage of everything the first release wrote; the running run
	// runs on through the next upgrade.
	waitFinished(t, r.c, time.Minute, runNew, runPending)
	r.checkStorageMigrated(frozenStorage)
	r.lap("release 2 takes over")

	before := r.createRelease2Objects()
	r.lap("release 2")
	inFlight := maps.Clone(release2InFlight)
	inFlight[runRunning] = true
	r.upgradeToCurrent(before, inFlight, append(release2RunningPods, runningPod)...)
	r.lap("upgrade to now")
	r.checkRelease2Objects(before, inFlight)
	r.checkFirstReleaseRuns()
	r.checkViewsKept(r.firstReleaseViews(), firstReleaseInFlight, "after the upgrades to release 2 and now")
	r.lap("runs in flight finished")

	r.writeV1beta1ObjectsThroughV1alpha1()
	r.lap("v1beta1 objects through v1alpha1")
	r.checkPods()
	r.checkStorageMigrated(currentStorage)
	r.report()
}

// TestUpgradeFromRelease2 rehearses the upgrade from release 2 to now on a
// cluster that never ran the first release: release 2's CRDs and manager,
// its objects in every phase through both versions, then the current
// release, with the same checks as TestUpgradeFromFirstRelease. Then a Task
// and runs that use every field release 3 added are written to through
// v1alpha1 (release3_through_v1alpha1_test.go).
func TestUpgradeFromRelease2(t *testing.T) {
	t.Parallel()
	r := newRehearsal(t, "upgrade-2", release2)
	r.installRelease(release2, views{}, nil)
	r.lap("install release 2")
	before := r.createRelease2Objects()
	r.lap("release 2")
	r.upgradeToCurrent(before, release2InFlight, release2RunningPods...)
	r.lap("upgrade to now")
	r.checkRelease2Objects(before, release2InFlight)
	r.lap("runs in flight finished")
	r.writeRelease3FieldsThroughV1alpha1()
	r.lap("release 3's fields through v1alpha1")
	r.checkPods()
	r.checkStorageMigrated(currentStorage)
	r.report()
}

// rehearsal carries what the steps of an upgrade rehearsal share.
type rehearsal struct {
	t *testing.T
	c *cluster
	// m is the manager running now: an earlier release's or the current one.
	m *manager
	// currentArgs are the flags the current manager starts with after an
	// upgrade (upgradeToCurrent), such as the Pod shape it builds.
	currentArgs []string

	// tasks and runs are the first release's objects as it last wrote them,
	// read through v1alpha1 before the upgrade.
	tasks map[string]*v1alpha1.Task
	runs  map[string]*v1alpha1.TaskRun
	// firstReleasePods are the UIDs of the Pods the first release made.
	firstReleasePods map[string]string
	// betaTasks and betaRuns are the objects created through v1beta1 after
	// the upgrade to now, as last read through v1beta1.
	betaTasks map[string]*v1beta1.Task
	betaRuns  map[string]*v1beta1.TaskRun
	// release3Checked says that the objects with release 3's fields were
	// written to through v1alpha1 and checked.
	release3Checked bool

	// wantPods are the Pods each run must have at the end, by run (runs
	// with none left out); keptPods the UIDs of those made before an
	// upgrade, by Pod name (recordPods).
	wantPods map[string][]string
	keptPods map[string]string
	// pods is how many Pods the Pod check found.
	pods int
	// stored counts the minitask keys in etcd by apiVersion, at the last
	// check, and storage is the version that check wanted.
	stored  map[string]int
	storage string

	start time.Time
	times map[string]time.Duration
	order []string
	last  time.Time
}

// newRehearsal creates cluster e2e-NAME with no minitask installed, and
// starts building the manager of release from meanwhile. The cluster does
// not serve the platform's storage version migration, so that the current
// manager moves storage itself, at once: the platform's path, which waits
// a minute or more for the garbage collector's informers, is rehearsed by
// TestUpgradeFromRelease5.
func newRehearsal(t *testing.T, name string, from *frozenRelease) *rehearsal {
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	from.prefetch(repo)
	return newRehearsalOn(t, name, withoutMinitask, withoutStorageVersionMigration)
}

// newRehearsalOn creates cluster e2e-NAME with opts for a rehearsal.
func newRehearsalOn(t *testing.T, name string, opts ...clusterOption) *rehearsal {
	now := time.Now()
	r := &rehearsal{t: t, start: now, last: now, times: map[string]time.Duration{},
		wantPods: map[string][]string{}, keptPods: map[string]string{}}
	r.c = newCluster(t, name, opts...)
	// kube-controller-manager creates the namespace's default
	// ServiceAccount a moment after the cluster is up, and the API server
	// refuses Pods until then: the current controller retries, but release
	// 2's ends the run PodFailed, and the first release's Pods are created
	// here.
	waitFor(t, time.Minute, "ServiceAccount default in "+ns, func(ctx context.Context) error {
		return r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
	})
	r.lap("cluster")
	return r
}

// upgradeToCurrent installs the current CRDs and webhook configuration while
// the earlier release's manager serves on, as `kubectl apply` before a
// rollout does, checks that every object still reads exactly as before
// (before, from the views the earlier release served), then replaces the
// earlier manager with the current one. The runs in flight must get a Pod
// if they have none; those of runningPods must still run as it starts.
func (r *rehearsal) upgradeToCurrent(before views, inFlight map[string]bool, runningPods ...string) {
	r.kubectl("apply", "--server-side", "-f", r.c.env["MINITASK_MANIFESTS"])
	r.waitEstablished()
	r.checkViewsUnchanged(before, "after installing the current CRDs, the earlier release's webhooks serving")
	r.checkStillRunning(runningPods...)
	r.recordPods(inFlight)
	if r.m != nil {
		r.m.stop()
	}
	r.m = startManager(r.t, r.c, r.currentArgs...)
}

// installRelease installs a frozen release's CRDs and webhook
// configuration, rendered from its own tree, while the manager running now
// (if any) serves on, as `kubectl apply` of the release's install.yaml
// before its rollout does; checks that every object still reads exactly as
// before (before, from the views the manager running now served); then
// replaces that manager with the release's own. The runs in flight must get
// a Pod if they have none; those of runningPods must still run as it starts.
// It is an upgrade from the first release, or a rollback from the current one.
func (r *rehearsal) installRelease(release *frozenRelease, before views, inFlight map[string]bool, runningPods ...string) {
	tree, bin := release.build(r.t)
	install := renderRelease(r.t, r.c, tree, release.crds())
	r.kubectl("apply", "--server-side", "-f", install)
	r.waitEstablished()
	r.checkViewsUnchanged(before, "after installing the CRDs of "+release.name)
	r.checkStillRunning(runningPods...)
	r.recordPods(inFlight)
	if r.m != nil {
		r.m.stop()
	}
	r.m = startManagerBinary(r.t, r.c, bin)
}

// waitEstablished waits until both CRDs are Established, as kubectl wait
// --for=condition=Established does, but for a CRD just created whose
// status has no conditions yet, on which kubectl wait fails rather than
// waits (it failed TestUpgradeFromRelease5 once in make test-e2e).
func (r *rehearsal) waitEstablished() {
	r.t.Helper()
	for _, name := range crdNames {
		waitFor(r.t, 30*time.Second, "CRD "+name+" to be established", func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := r.c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", crd.Status.Conditions)
		})
	}
}

// stopController restarts the manager running now with its controller off:
// its webhooks serve on, so that runs are written that no controller sees
// before the next release's.
func (r *rehearsal) stopController() {
	bin := r.m.bin
	r.m.stop()
	r.m = startManagerBinary(r.t, r.c, bin, "--enable-controller=false")
}

// checkStillRunning fails the test unless the named Pods still run: the
// rehearsal proves something only if the new manager meets Pods that do.
func (r *rehearsal) checkStillRunning(pods ...string) {
	r.t.Helper()
	for _, name := range pods {
		pod := &corev1.Pod{}
		if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			r.t.Fatal(err)
		}
		if pod.Status.Phase != corev1.PodRunning {
			r.t.Fatalf("Pod %s is %s before the new manager starts: let its step sleep longer", name, pod.Status.Phase)
		}
	}
}

// lap records the time since the last lap as the time of step name.
func (r *rehearsal) lap(name string) {
	now := time.Now()
	r.times[name] += now.Sub(r.last)
	if !slices.Contains(r.order, name) {
		r.order = append(r.order, name)
	}
	r.last = now
}

// kubectl runs kubectl with args against the cluster and returns what it
// printed; it fails the test if kubectl fails.
func (r *rehearsal) kubectl(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.c.runKubectl(ctx, args...)
	if err != nil {
		r.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// manifestFile writes objs as a YAML stream into a file of the test's and
// returns its path.
func (r *rehearsal) manifestFile(name string, objs ...map[string]any) string {
	r.t.Helper()
	docs := make([]string, len(objs))
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			r.t.Fatal(err)
		}
		docs[i] = string(b)
	}
	path := filepath.Join(r.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// report writes what the rehearsal checked to the test log.
func (r *rehearsal) report() {
	all := r.readViews()
	var b strings.Builder
	b.WriteString("upgrade rehearsal report:")
	if r.runs != nil {
		phases := map[string]int{}
		for _, run := range r.runs {
			phases[fmt.Sprintf("%q", run.Status.Phase)]++
		}
		fmt.Fprintf(&b, "\n  first release (v1alpha1, stored as v1alpha1): %d Tasks, %d TaskRuns by phase %v, %d Pods",
			len(r.tasks), len(r.runs), phases, len(r.firstReleasePods))
	}
	release2 := map[string]int{}
	for name, want := range release2Outcomes {
		if _, ok := all.betaRuns[name]; ok {
			release2[want]++
		}
	}
	fmt.Fprintf(&b, "\n  release 2 (its manager, v1beta1 and v1alpha1): TaskRuns by outcome %v", release2)
	if r.betaRuns != nil {
		fmt.Fprintf(&b, "\n  after the upgrade to now (v1beta1): %d Task, %d TaskRuns (params, timeout, cancel), written to through v1alpha1",
			len(r.betaTasks), len(r.betaRuns))
	}
	if r.release3Checked {
		fmt.Fprintf(&b, "\n  release 3's fields (v1beta1): Task %s and TaskRuns %s, %s with every new field, "+
			"written to through v1alpha1 (a label, a status, a step's script, a step's name)", r3Task, r3Done, r3Long)
	}
	fmt.Fprintf(&b, "\n  checked: %d objects, each read through v1alpha1 and v1beta1; %d Pods, one per run that needs one",
		len(all.betaTasks)+len(all.betaRuns), r.pods)
	fmt.Fprintf(&b, "\n  etcd: %v; storedVersions of both CRDs: [%s]\n  %s", r.stored, r.storage, r.timesLine())
	r.t.Log(b.String())
}

// timesLine says how long each step took, in order, and the total.
func (r *rehearsal) timesLine() string {
	var times []string
	for _, name := range r.order {
		times = append(times, fmt.Sprintf("%s %.1fs", name, r.times[name].Seconds()))
	}
	return fmt.Sprintf("time: %s; total %.1fs", strings.Join(times, ", "), time.Since(r.start).Seconds())
}

func (r *rehearsal) getAlphaTask(name string) *v1alpha1.Task {
	r.t.Helper()
	obj := &v1alpha1.Task{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getAlphaRun(name string) *v1alpha1.TaskRun {
	r.t.Helper()
	obj := &v1alpha1.TaskRun{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getBetaTask(name string) *v1beta1.Task {
	r.t.Helper()
	obj := &v1beta1.Task{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getBetaRun(name string) *v1beta1.TaskRun {
	r.t.Helper()
	obj := &v1beta1.TaskRun{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) get(name string, obj client.Object) {
	r.t.Helper()
	if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		r.t.Fatalf("reading %T %s: %v", obj, name, err)
	}
}
