package storagemigration_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestMigratorGoesOnPastObjectsItCannotRewrite has an admission policy deny
// every update of one Task, as a policy engine may, and checks that the
// migration (release 6's, from v1beta1 to v1) rewrites every other object
// all the same, says which one it could not (a metric, and a Warning Event
// that kubectl describe crd shows), retries that one alone, keeps
// storedVersions until it is rewritten, and completes once the policy lets
// it be.
func TestMigratorGoesOnPastObjectsItCannotRewrite(t *testing.T) {
	etcd := etcdClient(t)

	// Release 5: everything stored as v1beta1, storedVersions [v1beta1].
	setStorageVersion(t, "v1beta1")
	migrate(t, &storagemigration.Migrator{Reader: env.Client, Writer: env.Client})
	ns := env.Namespace(t)
	for _, name := range []string{"a", "b", "blocked", "c"} {
		env.Create(t, ns,
			&v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}},
			&v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: name}}})
	}
	setStorageVersion(t, "v1")
	lift := denyUpdates(t, ns, "blocked")

	patches := &patchCounter{counts: map[string]int{}}
	m := &storagemigration.Migrator{
		Reader: env.Client,
		Writer: patches.wrap(t, ns),
		// The manager's own migration, as on a cluster that does not serve
		// the platform's (Kubernetes 1.30 to 1.36); envtest serves it, but
		// runs no controller to take a migration up.
		ServesPlatform: notServed,
		Backoff:        wait.Backoff{Duration: 100 * time.Millisecond, Factor: 1.5, Steps: 1 << 30, Cap: 400 * time.Millisecond},
	}
	env.StartManager(t, func(mgr ctrl.Manager) error {
		m.Recorder = mgr.GetEventRecorder("minitask-storage-migration")
		return mgr.Add(m)
	})

	// One Task cannot hold up the TaskRuns' CRD, nor the other Tasks.
	testenv.Eventually(t, func() (bool, string) {
		got := storedVersions(t, "taskruns.minitask.dev")
		return slices.Equal(got, []string{"v1"}), fmt.Sprint(got)
	}, "the TaskRuns' storedVersions to be trimmed")
	testenv.Eventually(t, func() (bool, string) {
		n := patches.count("tasks/blocked")
		return n >= 3, fmt.Sprintf("%d attempts", n)
	}, "the blocked Task to be retried")
	if got := storedVersions(t, "tasks.minitask.dev"); !cmp.Equal(got, []string{"v1beta1", "v1"}) {
		t.Errorf("with a Task not rewritten, the Tasks' storedVersions = %v, want [v1beta1 v1] kept", got)
	}
	if diff := cmp.Diff(map[string]string{"tasks/blocked": "minitask.dev/v1beta1"}, notStoredIn(t, etcd, ns, "minitask.dev/v1")); diff != "" {
		t.Errorf("objects not stored as v1 while the policy denies one (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{}, patches.retried("tasks/blocked")); diff != "" {
		t.Errorf("objects rewritten more than once (-want +got):\n%s", diff)
	}
	// The gauge is set once a CRD's pass has returned, a moment after its
	// storedVersions were trimmed: wait for it rather than race it.
	wantNotRewritten := map[string]float64{"tasks.minitask.dev": 1, "taskruns.minitask.dev": 0}
	testenv.Eventually(t, func() (bool, string) {
		diff := cmp.Diff(wantNotRewritten, gauges(t, "minitask_storage_migration_objects_not_rewritten"))
		return diff == "", diff
	}, "minitask_storage_migration_objects_not_rewritten (-want +got)")
	// What an operator who wonders why storedVersions was not trimmed sees.
	wantWarning := fmt.Sprintf(`Warning\s+StorageMigrationIncomplete\s.*1 object not rewritten in v1, so status.storedVersions still lists v1beta1, v1; rewriting Task %s/blocked: .*a policy forbids changing blocked`, ns)
	awaitDescribeCRD(t, "tasks.minitask.dev", wantWarning)

	lift()
	testenv.Eventually(t, func() (bool, string) {
		got := storedVersions(t, "tasks.minitask.dev")
		return slices.Equal(got, []string{"v1"}), fmt.Sprint(got)
	}, "the Tasks' storedVersions to be trimmed once the policy allows the rewrite")
	if diff := cmp.Diff(map[string]string{}, notStoredIn(t, etcd, ns, "minitask.dev/v1")); diff != "" {
		t.Errorf("objects not stored as v1 after the migration (-want +got):\n%s", diff)
	}
	// As above: the gauge follows the trim by a moment.
	wantNotRewritten = map[string]float64{"tasks.minitask.dev": 0, "taskruns.minitask.dev": 0}
	testenv.Eventually(t, func() (bool, string) {
		diff := cmp.Diff(wantNotRewritten, gauges(t, "minitask_storage_migration_objects_not_rewritten"))
		return diff == "", diff
	}, "minitask_storage_migration_objects_not_rewritten after the migration (-want +got)")
	awaitDescribeCRD(t, "tasks.minitask.dev", `Normal\s+StorageMigrationComplete\s.*every object is rewritten in v1; status.storedVersions is now \[v1\]`)
}

// denyUpdates installs a ValidatingAdmissionPolicy that denies every update
// of the Task named name in namespace ns, waits until the API server applies
// it, and returns a function that lifts it and waits until updates pass
// again (the test's end lifts it anyway, so that no later test meets it).
func denyUpdates(t *testing.T, ns, name string) (lift func()) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"minitask.dev"}, APIVersions: []string{"*"}, Resources: []string{"tasks"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.name != %q", name),
				Message:    "a policy forbids changing " + name,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	// A dry run goes through admission but leaves the object as it is stored.
	denied := func() (bool, string) {
		task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		err := env.Client.Patch(ctx, task, client.RawPatch(types.MergePatchType, []byte("{}")), client.DryRunAll)
		return err != nil, fmt.Sprint(err)
	}
	lift = func() {
		for _, o := range []client.Object{binding, policy} {
			if err := client.IgnoreNotFound(env.Client.Delete(ctx, o)); err != nil {
				t.Errorf("deleting %T: %v", o, err)
			}
		}
		testenv.Eventually(t, func() (bool, string) {
			ok, explanation := denied()
			return !ok, explanation
		}, "the policy to let %s be updated again", name)
	}
	t.Cleanup(lift)
	testenv.Eventually(t, denied, "the policy to deny updates of %s", name)
	return lift
}

// patchCounter counts the patches of each object of one namespace, by
// "RESOURCE/NAME".
type patchCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// wrap returns a client that counts the patches of objects in ns.
func (p *patchCounter) wrap(t *testing.T, ns string) client.Client {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if obj.GetNamespace() == ns {
				resource := strings.ToLower(obj.GetObjectKind().GroupVersionKind().Kind) + "s"
				p.mu.Lock()
				p.counts[resource+"/"+obj.GetName()]++
				p.mu.Unlock()
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
}

func (p *patchCounter) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[key]
}

// retried returns the objects patched more than once, but except.
func (p *patchCounter) retried(except string) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := map[string]int{}
	for key, n := range p.counts {
		if n > 1 && key != except {
			got[key] = n
		}
	}
	return got
}

// notStoredIn returns the minitask objects of namespace ns that etcd holds in
// another apiVersion than want, by "RESOURCE/NAME", with the one they are in.
func notStoredIn(t *testing.T, etcd *clientv3.Client, ns, want string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for key, version := range storedAPIVersionOf(t, etcd, ns) {
		if version != want {
			got[key] = version
		}
	}
	return got
}

// gauges returns the values of the gauge named name on controller-runtime's
// metrics registry, by their crd label.
func gauges(t *testing.T, name string) map[string]float64 {
	return byCRD(t, name, func(m *dto.Metric) float64 { return m.GetGauge().GetValue() })
}

// byCRD returns value of each metric of the family named name on
// controller-runtime's metrics registry, by its crd label.
func byCRD(t *testing.T, name string, value func(*dto.Metric) float64) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "crd" {
					got[l.GetValue()] = value(m)
				}
			}
		}
	}
	return got
}

// awaitDescribeCRD waits until kubectl describe crd NAME prints a line
// matching pattern: Events are recorded asynchronously.
func awaitDescribeCRD(t *testing.T, name, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	testenv.Eventually(t, func() (bool, string) {
		out, errOut, err := env.RunKubectl("describe", "crd", name)
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, errOut)
		}
		return re.MatchString(out), out
	}, "kubectl describe crd %s to show %q", name, pattern)
}
