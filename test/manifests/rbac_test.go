package manifests_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
)

// role is the rules of one Role or ClusterRole, named for messages.
type role struct {
	id         string
	namespaced bool
	rules      []rbacv1.PolicyRule
}

func roles(t *testing.T, m manifests.Manifest) []role {
	t.Helper()
	var out []role
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, o := range m.All(kind) {
			var r rbacv1.ClusterRole // a Role's fields are a subset
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, role{id: kind + " " + o.GetName(), namespaced: kind == "Role", rules: r.Rules})
		}
	}
	return out
}

// grants returns what r grants, one "group resource verb" for each.
func (r role) grants() []string {
	var out []string
	for _, rule := range r.rules {
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				for _, verb := range rule.Verbs {
					out = append(out, group+" "+resource+" "+verb)
				}
			}
		}
	}
	return out
}

// managerRoleSources are the manager's ClusterRole as generated from the
// +kubebuilder:rbac markers and as config/default installs it.
func managerRoleSources(t *testing.T) map[string]manifests.Manifest {
	t.Helper()
	return map[string]manifests.Manifest{
		"config/rbac/role.yaml (generated)": manifests.Read(t, "config/rbac/role.yaml"),
		"config/default":                    manifests.Render(t, "default"),
	}
}

// TestRBACIsLeastPrivilege checks the role generated from the
// +kubebuilder:rbac markers and every role that the installations grant:
// no wildcards, Secrets only by name in the manager's namespace, and the
// CRDs and the webhook configuration only by name.
func TestRBACIsLeastPrivilege(t *testing.T) {
	sources := map[string]manifests.Manifest{
		"config/rbac/role.yaml (generated)": manifests.Read(t, "config/rbac/role.yaml"),
		"config/default":                    manifests.Render(t, "default"),
		"config/certmanager":                manifests.Render(t, "certmanager"),
	}
	for source, m := range sources {
		t.Run(source, func(t *testing.T) {
			rs := roles(t, m)
			if len(rs) == 0 {
				t.Fatal("no roles")
			}
			for _, r := range rs {
				for i, rule := range r.rules {
					for _, err := range checkRule(r, rule) {
						t.Errorf("%s rule %d %s: %s", r.id, i, describe(rule), err)
					}
				}
			}
		})
	}
}

// checkRule returns what is wrong with a rule.
func checkRule(r role, rule rbacv1.PolicyRule) []string {
	var errs []string
	for field, values := range map[string][]string{
		"verbs": rule.Verbs, "apiGroups": rule.APIGroups, "resources": rule.Resources,
		"resourceNames": rule.ResourceNames, "nonResourceURLs": rule.NonResourceURLs,
	} {
		for _, v := range values {
			if strings.Contains(v, "*") {
				errs = append(errs, fmt.Sprintf("wildcard %q in %s", v, field))
			}
		}
	}
	for _, res := range rule.Resources {
		base, _, _ := strings.Cut(res, "/")
		switch base {
		case "secrets":
			if len(rule.ResourceNames) == 0 {
				errs = append(errs, "Secrets without resourceNames")
			}
			if !r.namespaced {
				errs = append(errs, "Secrets in a ClusterRole: grant them in the manager's namespace only")
			}
			// create and deletecollection ignore resourceNames, and list and
			// watch need a field selector to honor them; the manager needs none.
			for _, v := range rule.Verbs {
				if !slices.Contains([]string{"get", "update", "patch"}, v) {
					errs = append(errs, "Secrets verb "+v)
				}
			}
		case "customresourcedefinitions", "validatingwebhookconfigurations", "mutatingwebhookconfigurations":
			if len(rule.ResourceNames) == 0 {
				errs = append(errs, base+" without resourceNames")
			}
		}
	}
	return errs
}

func describe(rule rbacv1.PolicyRule) string {
	return fmt.Sprintf("(%s %s %s %s)", rule.APIGroups, rule.Resources, rule.ResourceNames, rule.Verbs)
}

// TestRBACNamesTheInstalledObjects checks that the names RBAC grants are the
// names the installation gives: the markers spell out the names after
// kustomize's namePrefix, which no tool ties together.
func TestRBACNamesTheInstalledObjects(t *testing.T) {
	m := manifests.Render(t, "default")
	want := map[string][]string{
		"secrets":                          m.Names("Secret"),
		"customresourcedefinitions":        m.Names("CustomResourceDefinition"),
		"customresourcedefinitions/status": m.Names("CustomResourceDefinition"),
		"validatingwebhookconfigurations":  m.Names("ValidatingWebhookConfiguration"),
	}
	seen := map[string]bool{}
	for _, r := range roles(t, m) {
		for _, rule := range r.rules {
			for _, res := range rule.Resources {
				names, ok := want[res]
				if !ok {
					continue
				}
				seen[res] = true
				for _, n := range rule.ResourceNames {
					if !slices.Contains(names, n) {
						t.Errorf("%s grants %s %q, which config/default does not install (it installs %q)", r.id, res, n, names)
					}
				}
			}
		}
	}
	for res := range want {
		if !seen[res] {
			t.Errorf("no role grants %s", res)
		}
	}

	// The Secret's Role is in the namespace of the Secret and the manager.
	var secretRole []string
	for _, o := range m.All("Role") {
		if strings.Contains(fmt.Sprint(o.Object["rules"]), "secrets") {
			secretRole = append(secretRole, o.GetNamespace())
		}
	}
	for _, s := range m.All("Secret") {
		if !slices.Equal(secretRole, []string{s.GetNamespace()}) {
			t.Errorf("Secret %s is in %s, the Roles granting Secrets in %q", s.GetName(), s.GetNamespace(), secretRole)
		}
	}
}

// TestRBACLetsTheManagerReviewAccess checks that the installed ClusterRole
// lets the manager create SubjectAccessReviews, which the ServiceAccount use
// check asks the authorizer with (a cluster-scoped resource, so a ClusterRole),
// and grants nothing else on them: a review is created, never read back.
func TestRBACLetsTheManagerReviewAccess(t *testing.T) {
	for source, m := range managerRoleSources(t) {
		t.Run(source, func(t *testing.T) {
			var verbs []string
			manager := false
			for _, r := range roles(t, m) {
				for _, rule := range r.rules {
					if !slices.Contains(rule.APIGroups, "authorization.k8s.io") || !slices.Contains(rule.Resources, "subjectaccessreviews") {
						continue
					}
					if r.namespaced {
						t.Errorf("%s grants subjectaccessreviews, which are cluster-scoped", r.id)
					}
					verbs = append(verbs, rule.Verbs...)
					manager = manager || strings.HasSuffix(r.id, "manager-role")
				}
			}
			if !manager {
				t.Error("the manager's role grants no subjectaccessreviews")
			}
			// config/default's metrics role grants the same, for the
			// metrics endpoint's authorization.
			slices.Sort(verbs)
			if verbs = slices.Compact(verbs); !slices.Equal(verbs, []string{"create"}) {
				t.Errorf("subjectaccessreviews verbs %q, want [create]", verbs)
			}
		})
	}
}
