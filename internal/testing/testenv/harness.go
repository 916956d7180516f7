package testenv

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// Harness is one test's namespace on an Env, and what the tests of every
// package do there: create objects, read and change TaskRuns, play the
// kubelet, and run a manager that watches only that namespace.
type Harness struct {
	// Env is the API server: a package's, or one a test started for itself.
	Env *Env
	// NS is the test's namespace, made fresh for it.
	NS string
}

// NewHarness makes a fresh namespace for the test on e. On no Env (nil,
// as Run leaves it under -short) it skips the test.
func (e *Env) NewHarness(t testing.TB) *Harness {
	t.Helper()
	if e == nil {
		t.Skip("-short: needs a kube-apiserver and etcd")
	}
	return &Harness{Env: e, NS: e.Namespace(t)}
}

// Key is the key of the object named name in the harness's namespace.
func (h *Harness) Key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: h.NS, Name: name}
}

// Create creates objs in the harness's namespace, failing the test on the
// first error.
func (h *Harness) Create(t testing.TB, objs ...client.Object) {
	t.Helper()
	h.Env.Create(t, h.NS, objs...)
}

// StartManager starts a manager, as Env.StartManager does, whose cache
// holds the harness's namespace only; opts may set the rest of its cache
// options.
func (h *Harness) StartManager(t testing.TB, setup func(ctrl.Manager) error, opts ...func(*ctrl.Options)) (stop func()) {
	t.Helper()
	return h.Env.StartManager(t, setup, append(opts, func(o *ctrl.Options) {
		o.Cache.DefaultNamespaces = map[string]cache.Config{h.NS: {}}
	})...)
}

// TaskRun reads a TaskRun through the API server.
func (h *Harness) TaskRun(t testing.TB, name string) *v1.TaskRun {
	t.Helper()
	run := &v1.TaskRun{}
	if err := h.Env.Client.Get(context.Background(), h.Key(name), run); err != nil {
		t.Fatalf("getting TaskRun %s: %v", name, err)
	}
	return run
}

// TaskRunNames lists the names of the TaskRuns in the harness's namespace.
func (h *Harness) TaskRunNames(t testing.TB) []string {
	t.Helper()
	var list v1.TaskRunList
	if err := h.Env.Client.List(context.Background(), &list, client.InNamespace(h.NS)); err != nil {
		t.Fatalf("listing TaskRuns: %v", err)
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
	}
	return names
}

// UpdateTaskRun changes a TaskRun's spec or metadata through the API
// server, retrying on conflicts.
func (h *Harness) UpdateTaskRun(t testing.TB, name string, change func(*v1.TaskRun)) {
	t.Helper()
	h.updateTaskRun(t, name, change, h.Env.Client.Update)
}

// UpdateTaskRunStatus changes a TaskRun's status through the status
// subresource, as the controller would, retrying on conflicts.
func (h *Harness) UpdateTaskRunStatus(t testing.TB, name string, change func(*v1.TaskRun)) {
	t.Helper()
	h.updateTaskRun(t, name, change, func(ctx context.Context, obj client.Object, _ ...client.UpdateOption) error {
		return h.Env.Client.Status().Update(ctx, obj)
	})
}

func (h *Harness) updateTaskRun(t testing.TB, name string, change func(*v1.TaskRun),
	update func(context.Context, client.Object, ...client.UpdateOption) error) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run := &v1.TaskRun{}
		if err := h.Env.Client.Get(context.Background(), h.Key(name), run); err != nil {
			return err
		}
		change(run)
		return update(context.Background(), run)
	})
	if err != nil {
		t.Fatalf("updating TaskRun %s: %v", name, err)
	}
}

// WaitForPod waits until the Pod exists, and returns it.
func (h *Harness) WaitForPod(t testing.TB, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	Eventually(t, func() (bool, string) {
		err := h.Env.Client.Get(context.Background(), h.Key(name), pod)
		return err == nil, fmt.Sprint(err)
	}, "Pod %s to exist", name)
	return pod
}

// Kubelet waits for the Pod, then writes the status that set builds from
// it (wrappers.PodStatus, every container waiting until set says otherwise)
// through the status subresource, as the kubelet would.
func (h *Harness) Kubelet(t testing.TB, name string, set func(*wrappers.PodStatusWrapper)) {
	t.Helper()
	h.WaitForPod(t, name)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := h.Env.Client.Get(context.Background(), h.Key(name), pod); err != nil {
			return err
		}
		w := wrappers.PodStatus(pod)
		set(w)
		pod.Status = w.Obj()
		return h.Env.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("writing the status of Pod %s: %v", name, err)
	}
}

// Grant gives user, in the harness's namespace, what rules allow and
// nothing more (a Role and its RoleBinding, both named user); a client
// impersonating user then has exactly those rights.
func (h *Harness) Grant(t testing.TB, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	h.Create(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})
}
