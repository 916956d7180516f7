// Package releases starts test API servers that stand for clusters of
// minitask releases before this one, as kubectl task meets them: their
// CRDs as test/e2e/testdata keeps them, and what release 5 refuses at
// admission.
package releases

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// FrozenCRDs installs a release's CRDs as test/e2e/testdata keeps them
// (release-4-crds.yaml, say) in place of this release's config/crd/bases.
// The webhooks served are still this release's.
func FrozenCRDs(t testing.TB, file string) testenv.Option {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return func(e *envtest.Environment) {
		e.CRDDirectoryPaths = []string{filepath.Join(root, "test", "e2e", "testdata", file)}
	}
}

// Release5PendingRefusal is how release 5 refuses a TaskRun's
// timeouts.pending, which only release 6 runs (its internal/release6).
const Release5PendingRefusal = "spec.timeouts.pending: Forbidden: timeouts.pending needs minitask release 6 " +
	"(v1 as the storage version); this release serves v1 but cannot run it, and the release before it could not keep it"

// RefuseAsRelease5 makes e's API server refuse, as release 5 does and in
// its words, a TaskRun created through v1 with timeouts.pending: by a
// ValidatingAdmissionPolicy, since the webhooks served are this release's,
// which admit it. It returns once the policy is in force.
func RefuseAsRelease5(t testing.TB, e *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "release-5-refusals"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{v1.GroupVersion.Group}, APIVersions: []string{v1.GroupVersion.Version},
						Resources: []string{"taskruns"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.spec.timeouts) || !has(object.spec.timeouts.pending)",
				Message:    Release5PendingRefusal,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "release-5-refusals"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := e.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	probe := wrappers.TaskRun("default", "probe", "greet").Obj()
	probe.Spec.Timeouts.Pending = v1.NewDuration(0)
	testenv.Eventually(t, func() (bool, string) {
		err := e.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "needs minitask release 6"), "admitted"
	}, "the API server to refuse timeouts.pending")
}
