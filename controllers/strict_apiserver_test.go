package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
)

// etcdMaxRequestBytes is the largest object that the strict API server's etcd
// stores: less than the Pods the controller may build (1 MiB of text), so that
// a Pod too large for the API server is reached without breaking that limit.
const etcdMaxRequestBytes = 512 << 10

// TestStrictAPIServer runs the controller against an API server of its own
// that refuses what a real cluster's does and envtest's does not: a Pod
// whose ServiceAccount does not exist (envtest turns that admission plugin
// off), and an object larger than etcd stores (which it answers with a 500).
func TestStrictAPIServer(t *testing.T) {
	strict := testenv.ForTest(t, webhooks.SetupWithManager, testenv.WithServiceAccountAdmission(), testenv.WithEtcdMaxRequestBytes(etcdMaxRequestBytes))

	// What CI systems do: a namespace, and at once a Task and a run in it.
	// No controller-manager creates the namespace's default ServiceAccount
	// here: the test does, a few seconds later. Until then the run waits,
	// saying why, with one status write however often its Pod is refused.
	t.Run("brand-new namespace", func(t *testing.T) {
		h := newHarnessOn(t, strict)
		h.startController(t, time.Hour)
		h.Create(t, twoSteps("ci"), wrappers.TaskRun("", "ci", "ci").Obj())

		prefix := `Pod "ci-pod" not created yet: its ServiceAccount does not exist yet; retrying: `
		testenv.Eventually(t, func() (bool, string) {
			got := succeededCondition(h.TaskRun(t, "ci"))
			return got.Status == metav1.ConditionUnknown && got.Reason == v1.ReasonPending && strings.HasPrefix(got.Message, prefix) &&
				strings.Contains(got.Message, `serviceaccount "default" not found`), fmt.Sprintf("%+v", got)
		}, "the run to wait for its ServiceAccount")
		consistently(t, 3*time.Second, func() (bool, string) {
			got := succeededCondition(h.TaskRun(t, "ci"))
			return got.Status == metav1.ConditionUnknown && strings.HasPrefix(got.Message, prefix), fmt.Sprintf("%+v", got)
		})

		h.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
		h.waitForCondition(t, "ci", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "ci-pod" has not started a step yet`})
		if n := countVerb(h.writes.of("ci"), "patch status"); n != 2 {
			t.Errorf("%d status writes, want 2 (waiting, then the Pod created): %+v", n, h.writes.of("ci"))
		}
		// 100 ms doubling over the 3 s or so of waiting: about 6 attempts.
		n := countVerb(h.writes.of("ci-pod"), "create")
		if n > 10 {
			t.Errorf("%d attempts to create the Pod, want a backoff (at most 10)", n)
		}
		t.Logf("the Pod was created at attempt %d; attempts at %s", n, attemptTimes(h.writes.of("ci-pod"), "create"))
	})

	// A Pod within the controller's 1 MiB budget that is still too large to
	// store: here because etcd stores less than its default, elsewhere
	// because of what admission adds. It would be refused every time.
	t.Run("too large for etcd", func(t *testing.T) {
		h := newHarnessOn(t, strict)
		h.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
		h.startController(t, time.Hour)
		script := strings.Repeat("echo $(params.x)\n", 10)
		h.Create(t, wrappers.Task("", "large").Param("x").Step("only", "alpine:3", script).Obj(),
			wrappers.TaskRun("", "large", "large").Param("x", strings.Repeat("y", 60<<10)).Obj())

		run := h.waitFinished(t, "large")
		got := succeededCondition(run)
		if got.Reason != v1.ReasonPodFailed || got.Message != "the API server rejected the Pod: etcdserver: request is too large" {
			t.Errorf("condition %+v, want PodFailed with the API server's message", got)
		}
		if n := countVerb(h.writes.of("large-pod"), "create"); n > 3 {
			t.Errorf("the controller tried %d times to create a Pod too large for etcd, want at most 3", n)
		}
	})
}
