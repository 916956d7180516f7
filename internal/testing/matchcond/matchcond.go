// Package matchcond reads the validating webhooks that
// config/webhook/manifests.yaml installs and compiles their match conditions
// as the API server of the oldest Kubernetes the install supports does, for
// the tests that hold a match condition to the handler or the bound it
// stands for. It is imported by tests only.
package matchcond

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/version"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
)

// OldestKubernetesMinor is the minor version of the oldest Kubernetes the
// install supports (docs/install.md): the match conditions must compile there.
const OldestKubernetesMinor = 30

// Manifests is config/webhook/manifests.yaml, from the repository's root.
const Manifests = "config/webhook/manifests.yaml"

// Webhooks returns the validating webhooks Manifests installs.
func Webhooks(t testing.TB) []admissionregistrationv1.ValidatingWebhook {
	t.Helper()
	var config admissionregistrationv1.ValidatingWebhookConfiguration
	manifests.Read(t, Manifests).One(t, "ValidatingWebhookConfiguration", &config)
	return config.Webhooks
}

// Compile compiles conditions, with failurePolicy, as the API server of
// Kubernetes 1.OldestKubernetesMinor does, failing t if they do not compile.
func Compile(t testing.TB, failurePolicy *admissionregistrationv1.FailurePolicyType, conditions ...admissionregistrationv1.MatchCondition) matchconditions.Matcher {
	t.Helper()
	accessors := make([]plugincel.ExpressionAccessor, len(conditions))
	for i, c := range conditions {
		accessors[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	compiler := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(version.MajorMinor(1, OldestKubernetesMinor)))
	evaluator := compiler.CompileCondition(accessors, plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.NewExpressions)
	if errs := evaluator.CompilationErrors(); len(errs) > 0 {
		t.Fatalf("match conditions %+v do not compile for Kubernetes 1.%d: %v", conditions, OldestKubernetesMinor, errs)
	}
	name := "match conditions"
	if len(conditions) == 1 {
		name = conditions[0].Name
	}
	return matchconditions.NewMatcher(evaluator, failurePolicy, "webhook", "validating", name)
}
