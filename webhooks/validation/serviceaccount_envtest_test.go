package validation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// The users of these tests, each granted by RBAC in the test's namespace
// (envtest's API server authorizes with RBAC, so the webhook's
// SubjectAccessReviews get real answers).
const (
	userOfBuilder  = "alice" // creates TaskRuns; may use ServiceAccount builder
	runCreatorOnly = "bob"   // creates TaskRuns, nothing more
	podCreator     = "carol" // creates TaskRuns and Pods
	builderGroup   = "builders"
	groupMember    = "dave" // creates TaskRuns; may use builder through builderGroup
)

// TestServiceAccountUseThroughAPIServer proves, through a real API server and
// its RBAC authorizer, who may create a TaskRun that names a ServiceAccount,
// and that only such creates call the webhook.
func TestServiceAccountUseThroughAPIServer(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	ns := env.Namespace(t)
	grantServiceAccountTestRoles(t, env, ns)

	forbidden := func(user, sa string) []string {
		return []string{
			`admission webhook "vtaskrun-serviceaccount.minitask.dev" denied the request`,
			fmt.Sprintf(`spec.serviceAccountName: Forbidden: user %q may not use ServiceAccount %q in namespace %q: needs "use" on serviceaccounts %q or "create" on pods`,
				user, sa, ns, sa),
		}
	}
	tests := map[string]struct {
		user      string
		groups    []string
		run       client.Object
		wantErr   []string // substrings of a Forbidden error; none: admitted
		wantCalls float64  // calls of the webhook the create makes
	}{
		"may use the ServiceAccount": {
			user: userOfBuilder, run: wrappers.TaskRun(ns, "use-builder", "t").ServiceAccount("builder").Obj(), wantCalls: 1,
		},
		"may use another ServiceAccount": {
			user: userOfBuilder, run: wrappers.TaskRun(ns, "use-other", "t").ServiceAccount("other").Obj(),
			wantErr: forbidden(userOfBuilder, "other"), wantCalls: 1,
		},
		"may create runs only": {
			user: runCreatorOnly, run: wrappers.TaskRun(ns, "runs-only", "t").ServiceAccount("builder").Obj(),
			wantErr: forbidden(runCreatorOnly, "builder"), wantCalls: 1,
		},
		"may create Pods": {
			user: podCreator, run: wrappers.TaskRun(ns, "pods", "t").ServiceAccount("builder").Obj(), wantCalls: 1,
		},
		"may use the ServiceAccount through a group": {
			user: groupMember, groups: []string{builderGroup, "system:authenticated"},
			run: wrappers.TaskRun(ns, "group", "t").ServiceAccount("builder").Obj(), wantCalls: 1,
		},
		"names no ServiceAccount": {
			user: runCreatorOnly, run: wrappers.TaskRun(ns, "no-sa", "t").Obj(), wantCalls: 0,
		},
		// The API server converts a v1alpha1 or v1beta1 create to v1 before
		// it matches the webhook (matchPolicy Equivalent), so a
		// ServiceAccount written into the conversion annotation by hand is
		// checked too.
		"v1alpha1 with a ServiceAccount in the conversion annotation": {
			user: runCreatorOnly,
			run: wrappers.V1alpha1TaskRun(ns, "forged", "t").
				Annotation(conversion.AnnotationConversionData, `{"v1beta1":{"spec":{"serviceAccountName":"builder"}}}`).Obj(),
			wantErr: forbidden(runCreatorOnly, "builder"), wantCalls: 1,
		},
		"v1alpha1 by a user of the ServiceAccount": {
			user: userOfBuilder,
			run: wrappers.V1alpha1TaskRun(ns, "alpha-builder", "t").
				Annotation(conversion.AnnotationConversionData, `{"v1beta1":{"spec":{"serviceAccountName":"builder"}}}`).Obj(),
			wantCalls: 1,
		},
		"v1beta1 may create runs only": {
			user: runCreatorOnly,
			run: &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta-runs-only"},
				Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, ServiceAccountName: "builder"}},
			wantErr: forbidden(runCreatorOnly, "builder"), wantCalls: 1,
		},
		"array and object values, no ServiceAccount": {
			user: runCreatorOnly, run: wrappers.TaskRun(ns, "typed", "t").Params(
				v1.Param{Name: "files", Value: *v1.NewArrayValue("a.go", strings.Repeat("x", validation.MaxValueBytes/4))},
				v1.Param{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r"})}).Obj(),
			wantCalls: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := serviceAccountWebhookCalls(t)
			err := impersonate(t, env, tc.user, tc.groups...).Create(context.Background(), tc.run)
			checkForbidden(t, err, tc.wantErr)
			if calls := serviceAccountWebhookCalls(t) - before; calls != tc.wantCalls {
				t.Errorf("the create called the webhook %v times, want %v", calls, tc.wantCalls)
			}
		})
	}

	t.Run("serviceAccountName is immutable", func(t *testing.T) {
		testServiceAccountImmutable(t, env, ns)
	})
	// Last: it leaves the webhook unreachable.
	t.Run("webhook down", func(t *testing.T) { testServiceAccountWebhookDown(t, env, ns) })
}

// TestServiceAccountUseCheckOff proves that --serviceaccount-use-check=false
// admits what the check refuses, while the installed webhook configuration
// still sends those creates to the webhook.
func TestServiceAccountUseCheckOff(t *testing.T) {
	env := testenv.ForTest(t, func(mgr ctrl.Manager) error {
		return webhooks.SetupWithOptions(mgr, webhooks.Options{ServiceAccountUseCheck: false})
	})
	ns := env.Namespace(t)
	grantServiceAccountTestRoles(t, env, ns)
	run := wrappers.TaskRun(ns, "runs-only", "t").ServiceAccount("builder").Obj()
	before := serviceAccountWebhookCalls(t)
	if err := impersonate(t, env, runCreatorOnly).Create(context.Background(), run); err != nil {
		t.Fatalf("with the check off, %s's run naming a ServiceAccount was refused: %v", runCreatorOnly, err)
	}
	// So such creates still need the webhook up (docs/security.md).
	if calls := serviceAccountWebhookCalls(t) - before; calls != 1 {
		t.Errorf("the create called the webhook %v times, want 1", calls)
	}
}

// testServiceAccountImmutable checks the CRD rule that makes checking creates
// enough: no update gives a run a ServiceAccount or changes it.
func testServiceAccountImmutable(t *testing.T, env *testenv.Env, ns string) {
	ctx := context.Background()
	for name, run := range map[string]*v1.TaskRun{
		"changed": wrappers.TaskRun(ns, "immutable-changed", "t").ServiceAccount("builder").Obj(),
		"added":   wrappers.TaskRun(ns, "immutable-added", "t").Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := env.Client.Create(ctx, run); err != nil {
				t.Fatalf("creating %s as the cluster admin: %v", run.Name, err)
			}
			run.Spec.ServiceAccountName = "admin"
			err := env.Client.Update(ctx, run)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.serviceAccountName: Invalid value") ||
				!strings.Contains(err.Error(), "serviceAccountName is immutable") {
				t.Errorf("update to serviceAccountName %q: %v, want Invalid: serviceAccountName is immutable", run.Spec.ServiceAccountName, err)
			}
		})
	}
}

// grantServiceAccountTestRoles grants the users above their permissions in ns.
func grantServiceAccountTestRoles(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	roles := map[string]rbacv1.PolicyRule{
		"create-taskruns": {APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns"}, Verbs: []string{"create"}},
		"use-builder":     {APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"builder"}, Verbs: []string{"use"}},
		"create-pods":     {APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}},
	}
	user := func(name string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: name} }
	bindings := map[string][]rbacv1.Subject{
		"create-taskruns": {user(userOfBuilder), user(runCreatorOnly), user(podCreator), user(groupMember)},
		"use-builder":     {user(userOfBuilder), {Kind: rbacv1.GroupKind, Name: builderGroup}},
		"create-pods":     {user(podCreator)},
	}
	for name, rule := range roles {
		env.Create(t, ns,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects:   bindings[name],
			})
	}
}

// impersonate returns a client that acts as user, in groups if any are given
// (the API server then adds no system:authenticated of its own).
func impersonate(t *testing.T, env *testenv.Env, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatalf("creating a client for %s: %v", user, err)
	}
	return c
}

// serviceAccountWebhookCalls is how many reviews this process's webhook
// servers have answered at validation.TaskRunPath.
func serviceAccountWebhookCalls(t *testing.T) float64 {
	t.Helper()
	return testenv.CounterValue(t, "controller_runtime_webhook_requests_total", map[string]string{"webhook": validation.TaskRunPath})
}

// checkForbidden fails t unless err is nil and wantErr is empty, or err is a
// Forbidden status whose message contains every string in wantErr.
func checkForbidden(t *testing.T, err error, wantErr []string) {
	t.Helper()
	switch {
	case len(wantErr) == 0 && err != nil:
		t.Fatalf("refused: %v", err)
	case len(wantErr) == 0:
		return
	case err == nil:
		t.Fatalf("admitted, want refused with %q", wantErr)
	case !apierrors.IsForbidden(err):
		t.Fatalf("error %v is not Forbidden", err)
	}
	for _, want := range wantErr {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not contain %q", err, want)
		}
	}
}
