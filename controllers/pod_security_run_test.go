package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStepSecurityInRestrictedNamespace: in a namespace that enforces the
// restricted level, a step's own securityContext (and its stepTemplate's)
// is merged over what the level requires, and the Pod is admitted; a step
// that asks for what the level forbids ends its run PodConfigFailed at
// once, naming the step and the rule, with no second Pod tried.
func TestStepSecurityInRestrictedNamespace(t *testing.T) {
	h := newHarness(t)
	h.labelNamespace(t, "restricted")
	h.startController(t, time.Hour)
	allowed := wrappers.Task("", "allowed").Steps(
		v1.Step{Name: "serve", Image: "nginx:1", Script: "nginx -t", SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}},
		v1.Step{Name: "build", Image: "golang:1", Script: "go build"},
	).Obj()
	allowed.Spec.StepTemplate = &v1.StepTemplate{SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}}
	h.Create(t, allowed)
	forbidden := wrappers.Task("", "forbidden").Steps(
		v1.Step{Name: "fetch", Image: "alpine:3", Script: "true"},
		v1.Step{Name: "mount", Image: "alpine:3", Script: "mount -t tmpfs none /mnt", SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}},
	).Obj()
	h.Create(t, forbidden)

	h.Create(t, wrappers.TaskRun("", "allowed", "allowed").Obj())
	h.waitForCondition(t, "allowed", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "allowed-pod" has not started a step yet`})
	pod := h.WaitForPod(t, "allowed-pod")
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	serve := restricted.DeepCopy()
	serve.Capabilities.Add = []corev1.Capability{"NET_BIND_SERVICE"}
	for name, want := range map[string]*corev1.SecurityContext{"step-serve": serve, "step-build": restricted} {
		var got *corev1.SecurityContext
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if c.Name == name {
				got = c.SecurityContext
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("container %s's securityContext (-want +got):\n%s", name, diff)
		}
	}

	h.Create(t, wrappers.TaskRun("", "forbidden", "forbidden").Obj())
	h.waitForCondition(t, "forbidden", condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
		`Pod "forbidden-pod" asks for what its namespace's Pod Security level forbids: violates PodSecurity "restricted:latest": ` +
			`unrestricted capabilities (step "mount" must set securityContext.capabilities.drop=["ALL"]; ` +
			`step "mount" must not include "SYS_ADMIN" in securityContext.capabilities.add)`})
	if n := len(h.writes.of("forbidden-pod")); n != 1 {
		t.Errorf("%d writes of Pod forbidden-pod, want the one create Pod Security refused", n)
	}
}

// TestStepSecurityInBaselineNamespaceRemembered: a namespace read as not
// restricted, then labelled baseline, refuses a privileged step's Pod
// built from memory; the controller reads the namespace again, builds the
// same Pod, and ends the run PodConfigFailed at the second refusal: it
// never waits for a Pod the level will never admit.
func TestStepSecurityInBaselineNamespaceRemembered(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, twoSteps("plain"))
	h.Create(t, wrappers.TaskRun("", "first", "plain").Obj())
	h.waitForCondition(t, "first", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "first-pod" has not started a step yet`})

	h.enforceBaseline(t)
	privileged := wrappers.Task("", "privileged").Steps(
		v1.Step{Name: "build", Image: "quay.io/buildah/stable", Script: "buildah bud .",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}},
	).Obj()
	h.Create(t, privileged)
	h.Create(t, wrappers.TaskRun("", "privileged", "privileged").Obj())
	h.waitForCondition(t, "privileged", condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
		`Pod "privileged-pod" asks for what its namespace's Pod Security level forbids: violates PodSecurity "baseline:latest": ` +
			`privileged (step "build" must not set securityContext.privileged=true)`})
	if n := len(h.writes.of("privileged-pod")); n != 2 {
		t.Errorf("%d writes of Pod privileged-pod, want 2: one built from memory, one after the namespace was read again", n)
	}
}

// enforceBaseline labels the harness's namespace to enforce the baseline
// Pod Security level, and waits until Pod Security admission refuses a
// privileged Pod there (in a dry run): its informer may not have the label
// yet.
func (h *harness) enforceBaseline(t *testing.T) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns := &corev1.Namespace{}
		if err := h.Env.Client.Get(context.Background(), client.ObjectKey{Name: h.NS}, ns); err != nil {
			return err
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
		return h.Env.Client.Update(context.Background(), ns)
	})
	if err != nil {
		t.Fatalf("labelling namespace %s to enforce baseline: %v", h.NS, err)
	}
	testenv.Eventually(t, func() (bool, string) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "pod-security-probe"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "probe", Image: "alpine:3",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}},
		}
		err := h.Env.Client.Create(context.Background(), probe, client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "violates PodSecurity"), fmt.Sprintf("dry-run create: %v", err)
	}, "Pod Security admission to enforce baseline in namespace %s", h.NS)
}
