package storedversions_test

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/storedversions"
	"github.com/minitask-dev/minitask/internal/testing/manifests"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// TestWatcherFollowsStoredVersions runs the Watcher against a real API
// server: it says may-hold until it has read the CRD, then follows what
// storedVersions says as it changes while it runs, as a rollback to release
// 5 (v1beta1 stored again) and the migration back to v1 change it.
func TestWatcherFollowsStoredVersions(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	w := &storedversions.Watcher{Config: env.Config}
	if !w.MayHoldUnreadableTimes() {
		t.Fatal("a Watcher not started says no run may hold such times; want may-hold")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})

	for _, stored := range [][]string{{"v1"}, {"v1", "v1beta1"}, {"v1beta1"}, {"v1beta1", "v1"}, {"v1"}} {
		setStoredVersions(t, env, stored)
		want := storedversions.MayHoldUnreadableTimes(stored)
		testenv.Eventually(t, func() (bool, string) {
			got := w.MayHoldUnreadableTimes()
			return got == want, fmt.Sprintf("MayHoldUnreadableTimes() = %v", got)
		}, "the Watcher to follow storedVersions %q (want %v)", stored, want)
	}
}

// setStoredVersions sets the TaskRun CRD's status.storedVersions, as an
// upgrade, a rollback or a migration does.
func setStoredVersions(t *testing.T, env *testenv.Env, stored []string) {
	t.Helper()
	env.SetStoredVersions(t, storedversions.TaskRuns, stored)
}

// TestWatcherNeedsOnlyTheManagersRole runs the Watcher as a user bound to
// nothing but the manager's ClusterRole (config/rbac/role.yaml): its rule
// on the TaskRun CRD by name is enough for the LIST and WATCH, which the
// API server authorizes by the field selector's name.
func TestWatcherNeedsOnlyTheManagersRole(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	role := &rbacv1.ClusterRole{}
	manifests.Read(t, "config/rbac/role.yaml").One(t, "ClusterRole", role)
	const user = "minitask-manager"
	role.ObjectMeta = metav1.ObjectMeta{Name: user}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, obj := range []client.Object{role, binding} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	w := &storedversions.Watcher{Config: cfg}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	setStoredVersions(t, env, []string{"v1"})
	testenv.Eventually(t, func() (bool, string) {
		return !w.MayHoldUnreadableTimes(), "the Watcher has not read storedVersions [v1]"
	}, "the Watcher, with the manager's role only, to read the CRD")
}
