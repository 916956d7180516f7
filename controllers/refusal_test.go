package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodRefusals has admission refuse a run's Pod in each way a real
// cluster does. A refusal that can pass keeps the run Pending, saying why,
// until the test lets the Pod through; one that cannot ends the run
// PodFailed after one attempt.
func TestPodRefusals(t *testing.T) {
	tests := map[string]struct {
		// refuse makes admission refuse the run's Pods in namespace ns.
		refuse func(t *testing.T, h *harness)
		// refusal is a part of the API server's message, which the test
		// waits for (on a dry run) before it creates the run.
		refusal string
		// cause is what the Pending message says the run waits for; empty
		// for a refusal that cannot pass.
		cause string
		// allow lets the run's Pod through.
		allow func(t *testing.T, h *harness)
	}{
		"quota not yet computed": {
			// The quota controller has taken up the limit, not yet the usage.
			refuse: func(t *testing.T, h *harness) {
				h.Create(t, podQuota(10))
				h.computeQuota(t, 10, nil)
			},
			refusal: "status unknown for quota",
			cause:   "a ResourceQuota is not yet computed",
			allow:   func(t *testing.T, h *harness) { h.computeQuota(t, 10, ptr.To[int64](0)) },
		},
		"quota exceeded": {
			refuse: func(t *testing.T, h *harness) {
				h.Create(t, podQuota(1))
				h.computeQuota(t, 1, ptr.To[int64](1))
			},
			refusal: "exceeded quota",
			cause:   "a ResourceQuota is exceeded",
			allow:   func(t *testing.T, h *harness) { h.computeQuota(t, 1, ptr.To[int64](0)) },
		},
		"admission webhook unreachable": {
			refuse:  func(t *testing.T, h *harness) { h.createCluster(t, unreachableWebhook(h.NS)) },
			refusal: "failed calling webhook",
			cause:   "an admission webhook failed or did not answer",
			allow: func(t *testing.T, h *harness) {
				h.deleteCluster(t, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "unreachable-" + h.NS}})
			},
		},
		"LimitRange": {
			refuse: func(t *testing.T, h *harness) {
				h.Create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Spec: corev1.LimitRangeSpec{
					Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}})
			},
			refusal: "maximum cpu usage per Pod",
		},
		"admission policy denial": {
			refuse: func(t *testing.T, h *harness) {
				policy, binding := denyPodsPolicy(h.NS)
				h.createCluster(t, policy, binding)
			},
			refusal: "denied request: no Pods here",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			tc.refuse(t, h)
			h.waitForRefusal(t, tc.refusal)
			h.startController(t, time.Hour)
			h.Create(t, twoSteps("refused"), wrappers.TaskRun("", "refused", "refused").Obj())

			if tc.cause == "" {
				run := h.waitFinished(t, "refused")
				got := succeededCondition(run)
				if got.Reason != v1.ReasonPodFailed || !strings.HasPrefix(got.Message, "the API server rejected the Pod: ") ||
					!strings.Contains(got.Message, tc.refusal) {
					t.Errorf("condition %+v, want PodFailed with the API server's message", got)
				}
				if n := countVerb(h.writes.of("refused-pod"), "create"); n > 3 {
					t.Errorf("the controller tried %d times to create a Pod refused for good, want at most 3", n)
				}
				return
			}
			prefix := fmt.Sprintf(`Pod "refused-pod" not created yet: %s; retrying: `, tc.cause)
			testenv.Eventually(t, func() (bool, string) {
				got := succeededCondition(h.TaskRun(t, "refused"))
				return got.Status == metav1.ConditionUnknown && got.Reason == v1.ReasonPending &&
					strings.HasPrefix(got.Message, prefix) && strings.Contains(got.Message, tc.refusal), fmt.Sprintf("%+v", got)
			}, "the run to wait, saying %q", prefix)
			tc.allow(t, h)
			h.waitForCondition(t, "refused", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "refused-pod" has not started a step yet`})
			// One status write while the Pod was refused, however often it
			// was retried, and one once it was created.
			if n := countVerb(h.writes.of("refused"), "patch status"); n != 2 {
				t.Errorf("%d status writes, want 2: %+v", n, h.writes.of("refused"))
			}
		})
	}
}

// TestTimeoutWhileRefused: a run whose Pod a full quota keeps refusing times
// out at its deadline, although its retries back off, and the retries come
// as a backoff, not a loop.
func TestTimeoutWhileRefused(t *testing.T) {
	h := newHarness(t)
	h.Create(t, podQuota(1))
	h.computeQuota(t, 1, ptr.To[int64](1))
	h.waitForRefusal(t, "exceeded quota")
	h.startController(t, time.Hour)
	const timeout = 6 * time.Second
	h.Create(t, twoSteps("full"), wrappers.TaskRun("", "full", "full").Timeout(timeout).Obj())

	run := h.waitFinished(t, "full")
	want := condition{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "full" did not finish within 6s`}
	if got := succeededCondition(run); got != want {
		t.Errorf("condition %+v, want %+v", got, want)
	}
	// Both times are whole seconds: the start rounded down, so the run
	// ended within a second of its deadline.
	if took := run.Status.CompletionTime.Sub(run.Status.StartTime.Time); took > timeout+time.Second {
		t.Errorf("the run timed out %v after it started, want at most %v", took, timeout+time.Second)
	}
	// 100 ms doubling: attempts at 0, 0.1, 0.3, 0.7, 1.5, 3.1 s and at the
	// deadline, give or take those a status write's own event adds.
	n := countVerb(h.writes.of("full-pod"), "create")
	if n > 10 {
		t.Errorf("%d attempts to create the Pod in %v, want a backoff (at most 10)", n, timeout)
	}
	t.Logf("%d attempts to create the Pod, at %s; timed out %v after the start", n, attemptTimes(h.writes.of("full-pod"), "create"),
		run.Status.CompletionTime.Sub(run.Status.StartTime.Time))
	if n := countVerb(h.writes.of("full"), "patch status"); n != 2 {
		t.Errorf("%d status writes, want 2 (Pending, then TaskRunTimeout): %+v", n, h.writes.of("full"))
	}
}

// waitFinished waits until run's condition is True or False, and returns it.
func (h *harness) waitFinished(t *testing.T, name string) *v1.TaskRun {
	t.Helper()
	var run *v1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.TaskRun(t, name)
		got := succeededCondition(run)
		return got.Status == metav1.ConditionTrue || got.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", got)
	}, "TaskRun %s to finish", name)
	return run
}

// waitForRefusal waits until the API server refuses, on a dry run, a Pod
// like the controller's with a message that holds refusal: admission's
// caches of quotas, limits, webhooks and policies have caught up.
func (h *harness) waitForRefusal(t *testing.T, refusal string) {
	t.Helper()
	testenv.Eventually(t, func() (bool, string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "probe", Labels: map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "alpine:3"}}},
		}
		err := h.Env.Client.Create(context.Background(), pod, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), refusal), fmt.Sprint(err)
	}, "the API server to refuse Pods with %q", refusal)
}

// podQuota is a ResourceQuota of n Pods, which no quota controller computes
// in envtest: the test writes its status (computeQuota).
func podQuota(n int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(n, resource.DecimalSI)}},
	}
}

// computeQuota writes the status of podQuota as the quota controller would:
// its limit of hard Pods, and the Pods used, if it has counted them (used
// not nil).
func (h *harness) computeQuota(t *testing.T, hard int64, used *int64) {
	t.Helper()
	quota := podQuota(hard)
	if err := h.Env.Client.Get(context.Background(), h.Key(quota.Name), quota); err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(hard, resource.DecimalSI)}}
	if used != nil {
		quota.Status.Used = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(*used, resource.DecimalSI)}
	}
	if err := h.Env.Client.Status().Update(context.Background(), quota); err != nil {
		t.Fatalf("writing the status of ResourceQuota %s: %v", quota.Name, err)
	}
}

// createCluster creates cluster-scoped objects, deleted when the test ends.
func (h *harness) createCluster(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := h.Env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() { h.deleteCluster(t, obj) })
	}
}

func (h *harness) deleteCluster(t *testing.T, obj client.Object) {
	t.Helper()
	if err := h.Env.Client.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
	}
}

// onlyIn selects namespace ns, by the label the API server gives every namespace.
func onlyIn(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
}

var podCreates = admissionregistrationv1.RuleWithOperations{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
}

// unreachableWebhook is a validating webhook for Pods in namespace ns that
// fails closed and that nothing serves: every call fails at once.
func unreachableWebhook(ns string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "unreachable-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "unreachable.minitask.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
			Rules:                   []admissionregistrationv1.RuleWithOperations{podCreates},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       onlyIn(ns),
			TimeoutSeconds:          ptr.To[int32](1),
		}},
	}
}

// denyPodsPolicy is a ValidatingAdmissionPolicy, and its binding, that
// denies every Pod in namespace ns.
func denyPodsPolicy(ns string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	name := "deny-pods-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: podCreates}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "no Pods here"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: onlyIn(ns)},
		},
	}
	return policy, binding
}

// attemptTimes says when the writes of a verb were attempted, in seconds
// after the first.
func attemptTimes(writes []write, verb string) string {
	var times []string
	var first time.Time
	for _, w := range writes {
		if w.Verb != verb {
			continue
		}
		if first.IsZero() {
			first = w.At
		}
		times = append(times, fmt.Sprintf("%.2fs", w.At.Sub(first).Seconds()))
	}
	return strings.Join(times, ", ")
}
