package manifests_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRBACDeletesOnlyPodsAndRuns pins what the manager's ClusterRole may
// delete: the Pods it runs (a Pod that never started, when a run stops) and
// TaskRuns (a finished run whose time to live has passed). Tasks, which users
// write and runs refer to, are never deleted, nor is anything else.
func TestRBACDeletesOnlyPodsAndRuns(t *testing.T) {
	for source, m := range managerRoleSources(t) {
		t.Run(source, func(t *testing.T) {
			var deletable []string
			for _, r := range roles(t, m) {
				if r.namespaced || !strings.HasSuffix(r.id, "manager-role") {
					continue
				}
				for _, rule := range r.rules {
					if !slices.Contains(rule.Verbs, "delete") && !slices.Contains(rule.Verbs, "deletecollection") {
						continue
					}
					for _, group := range rule.APIGroups {
						for _, resource := range rule.Resources {
							deletable = append(deletable, group+" "+resource)
						}
					}
				}
			}
			slices.Sort(deletable)
			want := []string{" pods", "minitask.dev taskruns"}
			if diff := cmp.Diff(want, deletable); diff != "" {
				t.Errorf("what the manager's ClusterRole may delete, as \"group resource\" (-want +got):\n%s", diff)
			}
		})
	}
}
