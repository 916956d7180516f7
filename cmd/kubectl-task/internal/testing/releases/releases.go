// Package releases makes test API servers stand for clusters other than
// this release's, as kubectl task meets them: an earlier release's CRDs as
// test/e2e/testdata keeps them, what release 5 refuses at admission, and
// any admission policy of a cluster's own (AdmissionPolicy).
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
	probe := wrappers.TaskRun("default", "probe", "greet").Obj()
	probe.Spec.Timeouts.Pending = v1.NewDuration(0)
	AdmissionPolicy(t, e, "release-5-refusals", "!has(object.spec.timeouts) || !has(object.spec.timeouts.pending)",
		Release5PendingRefusal, admissionregistrationv1.Deny, nil)
	testenv.Eventually(t, func() (bool, string) {
		err := e.Client.Create(context.Background(), probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "needs minitask release 6"), "admitted"
	}, "the API server to refuse timeouts.pending")
}

// AdmissionPolicy makes e's API server judge the TaskRuns created through
// v1 (in the namespaces namespaces selects; all when nil) by expression, a
// CEL rule on object, with message and action (Deny, Warn) for those that
// fail it: a ValidatingAdmissionPolicy and its binding, both named name.
// It may take a moment to be in force.
func AdmissionPolicy(t testing.TB, e *testenv.Env, name, expression, message string,
	action admissionregistrationv1.ValidationAction, namespaces *metav1.LabelSelector) {
	t.Helper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{v1.GroupVersion.Group}, APIVersions: []string{v1.GroupVersion.Version},
						Resources: []string{"taskruns"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{action},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: namespaces}},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := e.Client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Client.Delete(context.Background(), obj) })
	}
}
