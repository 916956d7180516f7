package stashguard_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/storedversions"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// TestGuardFollowsStoredVersionsThroughAPIServer serves the webhooks as the
// manager does, with a storedversions.Watcher, and sends a v1 status write
// of a run release 2 stored (a lower-case time, put straight into etcd)
// through a real API server: refused while storedVersions lists v1beta1
// (as during the migration to v1, or after a rollback to release 5), and
// not judged at all once it lists v1 alone, followed as it changes. (Under
// [v1] no such run can be stored: the test puts one there only to see,
// from outside, that the guard no longer decodes.)
func TestGuardFollowsStoredVersionsThroughAPIServer(t *testing.T) {
	var watcher *storedversions.Watcher
	env := testenv.ForTest(t, func(mgr ctrl.Manager) error {
		watcher = &storedversions.Watcher{Config: mgr.GetConfig()}
		if err := mgr.Add(watcher); err != nil {
			return err
		}
		o := webhooks.DefaultOptions()
		o.StoredVersions = watcher
		return webhooks.SetupWithOptions(mgr, o)
	})
	ns := env.Namespace(t)
	env.PutInEtcd(t, "taskruns", ns, "release-2", []byte(`{"apiVersion": "minitask.dev/v1beta1", "kind": "TaskRun",
		"spec": {"taskRef": {"name": "build"}, "timeout": "1h"},
		"status": {"startTime": "2024-05-01t10:00:00z"}}`))
	const guardSays = "cannot be converted to minitask.dev/v1beta1"
	statusWrite := func(podName string) error {
		run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release-2"}}
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"status":{"podName":%q}}`, podName))
		return env.Client.Status().Patch(t.Context(), run, patch)
	}

	for i, stored := range [][]string{{"v1beta1", "v1"}, {"v1"}, {"v1", "v1beta1"}} {
		setStoredVersions(t, env, stored)
		mayHold := storedversions.MayHoldUnreadableTimes(stored)
		testenv.Eventually(t, func() (bool, string) {
			got := watcher.MayHoldUnreadableTimes()
			return got == mayHold, fmt.Sprintf("the watcher says %v", got)
		}, "the guard's watcher to follow storedVersions %q", stored)
		err := statusWrite(fmt.Sprintf("pod-%d", i))
		refused := err != nil && strings.Contains(err.Error(), guardSays)
		if refused != mayHold {
			t.Errorf("storedVersions %q: v1 status write of release 2's run: %v; want the guard to refuse it: %v", stored, err, mayHold)
		}
	}
}

// setStoredVersions sets the TaskRun CRD's status.storedVersions, as an
// upgrade, a rollback or a migration does.
func setStoredVersions(t *testing.T, env *testenv.Env, stored []string) {
	t.Helper()
	env.SetStoredVersions(t, storedversions.TaskRuns, stored)
}
