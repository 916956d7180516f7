package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// labelNamespace sets the Pod Security level that the harness's namespace
// enforces, or removes the label when level is empty.
func (h *harness) labelNamespace(t *testing.T, level string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns := &corev1.Namespace{}
		if err := h.Env.Client.Get(context.Background(), client.ObjectKey{Name: h.NS}, ns); err != nil {
			return err
		}
		if level == "" {
			delete(ns.Labels, "pod-security.kubernetes.io/enforce")
		} else {
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels["pod-security.kubernetes.io/enforce"] = level
		}
		return h.Env.Client.Update(context.Background(), ns)
	})
	if err != nil {
		t.Fatalf("labelling namespace %s to enforce %q: %v", h.NS, level, err)
	}
	// Pod Security admission reads namespaces from its informer, which may
	// not have the label yet: wait until it judges a Pod without the
	// restricted settings (created in a dry run) by the new level.
	testenv.Eventually(t, func() (bool, string) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "pod-security-probe"},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "probe", Image: "alpine:3"}}},
		}
		err := h.Env.Client.Create(context.Background(), probe, client.DryRunAll)
		refused := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "violates PodSecurity")
		return refused == (level == "restricted"), fmt.Sprintf("dry-run create: %v", err)
	}, "Pod Security admission to enforce %q in namespace %s", level, h.NS)
}

// TestNamespaceRelabelled follows one namespace through both changes of its
// Pod Security level. Runs in a namespace that does not enforce the
// restricted level read its labels once, not once a run. Labelled
// restricted, the namespace refuses the next Pod, built from what was
// remembered; the run is not failed for it but reads the namespace again
// and gets the Pod the level admits. Unlabelled, it gets a plain Pod at
// once, for a restricted namespace is never remembered.
func TestNamespaceRelabelled(t *testing.T) {
	h := newHarness(t)
	reads := &readCounter{Reader: h.Env.Client, counts: func(obj client.Object, _ error) bool {
		meta, ok := obj.(*metav1.PartialObjectMetadata)
		return ok && meta.Kind == "Namespace"
	}}
	h.startControllerOn(t, func(c client.Client) client.Client { return c }, func(r *controllers.TaskRunReconciler) { r.APIReader = reads })
	h.Create(t, twoSteps("t"))
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	// runPod creates a run and returns its Pod once the run waits for it to start.
	runPod := func(name string) *corev1.Pod {
		t.Helper()
		h.Create(t, wrappers.TaskRun("", name, "t").Obj())
		h.waitForCondition(t, name, condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "` + name + `-pod" has not started a step yet`})
		return h.WaitForPod(t, name+"-pod")
	}
	expectSecurity := func(pod *corev1.Pod, want *corev1.SecurityContext) {
		t.Helper()
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if diff := cmp.Diff(want, c.SecurityContext); diff != "" {
				t.Errorf("Pod %s container %s securityContext (-want +got):\n%s", pod.Name, c.Name, diff)
			}
		}
	}

	expectSecurity(runPod("first"), nil)
	expectSecurity(runPod("second"), nil)
	if n := reads.n.Load(); n != 1 {
		t.Errorf("the controller read the namespace %d times for two runs, want once", n)
	}

	h.labelNamespace(t, "restricted")
	expectSecurity(runPod("relabelled"), restricted)
	creates := 0
	for _, w := range h.writes.of("relabelled-pod") {
		if w.Verb != "create" {
			continue
		}
		creates++
		if creates == 1 && !strings.Contains(w.Err, `violates PodSecurity "restricted:latest"`) {
			t.Errorf("the first create of the Pod answered %q, want Pod Security's refusal of the Pod built from memory", w.Err)
		}
	}
	if creates != 2 {
		t.Errorf("%d creates of Pod relabelled-pod, want 2: one refused, one built for the new level", creates)
	}
	if n := reads.n.Load(); n != 2 {
		t.Errorf("the controller read the namespace %d times, want twice: once more after the refusal", n)
	}

	h.labelNamespace(t, "")
	expectSecurity(runPod("unlabelled"), nil)
}
