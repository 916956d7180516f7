package manifests_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

// TestRBACTableIsTheRole holds docs/install.md's table of the manager's
// ClusterRole equal to the role generated from the +kubebuilder:rbac markers,
// grant by grant (API group, resource, verb), so that a permission the code
// gains is explained to whoever installs it.
func TestRBACTableIsTheRole(t *testing.T) {
	documented := sets.New[string]()
	for _, row := range markdown.Table(t, "../../docs/install.md", "| API group | resources | names | verbs | why |") {
		group := strings.Trim(row[0], `"`)
		for _, resource := range splitList(row[1]) {
			for _, verb := range splitList(row[3]) {
				documented.Insert(group + " " + resource + " " + verb)
			}
		}
	}
	generated := sets.New[string]()
	for _, r := range roles(t, manifests.Read(t, "config/rbac/role.yaml")) {
		if r.namespaced {
			continue // the certificate Secret's Role, which install.md describes in prose
		}
		generated.Insert(r.grants()...)
	}
	if diff := cmp.Diff(sets.List(generated), sets.List(documented)); diff != "" {
		t.Errorf("docs/install.md's ClusterRole table (+) against config/rbac/role.yaml (-), as \"group resource verb\":\n%s", diff)
	}
}

// splitList splits a table cell such as "get, list, watch" into its items.
func splitList(cell string) []string {
	var out []string
	for item := range strings.SplitSeq(cell, ",") {
		if item = strings.Trim(strings.TrimSpace(item), "`"); item != "" {
			out = append(out, item)
		}
	}
	slices.Sort(out)
	return out
}
