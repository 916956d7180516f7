package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
)

// TestPodSpecRelease3 checks, as the API server stores it, the whole spec of
// the Pod of a run with two workspaces (one bound to a PersistentVolumeClaim,
// one unbound), env from a Secret (a key and the whole Secret), compute
// resources and a Pod template: what the contract says, and the API server's
// defaults, nothing else.
//
// The API server runs the ServiceAccount admission plugin, as a cluster's
// does (envtest turns it off): it would add a token volume to a Pod that did
// not refuse one.
func TestPodSpecRelease3(t *testing.T) {
	h := newHarnessOn(t, testenv.ForTest(t, webhooks.SetupWithManager, testenv.WithServiceAccountAdmission()))
	ctx := context.Background()
	h.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}})
	h.startController(t, time.Hour)
	priority := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: h.NS + "-low"}, Value: 10}
	if err := h.Env.Client.Create(ctx, priority); err != nil {
		t.Fatalf("creating PriorityClass: %v", err)
	}
	t.Cleanup(func() { _ = h.Env.Client.Delete(ctx, priority) })

	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	token := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}
	fromSecret := []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	task := wrappers.Task("", "build").ParamDefault("greeting", "hello").
		Workspaces(v1.WorkspaceDeclaration{Name: "source"}, v1.WorkspaceDeclaration{Name: "scratch", MountPath: "/tmp/scratch"}).
		Steps(
			v1.Step{Name: "fetch", Image: "alpine:3", Script: `echo "$GREETING" > "$(workspaces.source.path)/greeting"`,
				Env: []corev1.EnvVar{{Name: "GREETING", Value: "$(params.greeting)"}}},
			v1.Step{Name: "compile", Image: "golang:1", Command: []string{"go"}, Args: []string{"build", "-o", "$(workspaces.scratch.path)/app"},
				WorkingDir: "$(workspaces.source.path)",
				Env:        []corev1.EnvVar{{Name: "TOKEN", ValueFrom: token}, {Name: "OUT", Value: "$(workspaces.scratch.path)"}},
				EnvFrom:    fromSecret, ComputeResources: &resources},
		).Obj()
	toleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoSchedule}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}}}}
	run := wrappers.TaskRun("", "build-1", "build").Param("greeting", "hi").Label("team", "a").
		Workspace(v1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}}).
		PodTemplate(v1.PodTemplate{
			NodeSelector:      map[string]string{"disk": "ssd"},
			Tolerations:       []corev1.Toleration{toleration},
			Affinity:          affinity,
			SecurityContext:   &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000)},
			ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
			PriorityClassName: priority.Name,
		}).Timeout(30 * time.Minute).Obj()
	h.Create(t, task, run)

	pod := h.WaitForPod(t, "build-1-pod")
	mounts := []corev1.VolumeMount{
		{Name: "ws-source", MountPath: "/workspace/source"},
		{Name: "ws-scratch", MountPath: "/tmp/scratch"},
	}
	// The API server's defaults for every container.
	defaulted := func(c corev1.Container) corev1.Container {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
		c.VolumeMounts = mounts
		return c
	}
	want := corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "ws-source", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}}},
			{Name: "ws-scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		InitContainers: []corev1.Container{defaulted(corev1.Container{
			Name: "step-fetch", Image: "alpine:3",
			Command: controllers.ScriptCommand(`echo "$GREETING" > "/workspace/source/greeting"`, "", 2),
			Env:     []corev1.EnvVar{{Name: "GREETING", Value: "hi"}},
		})},
		Containers: []corev1.Container{defaulted(corev1.Container{
			Name: "step-compile", Image: "golang:1",
			Command: []string{"go"}, Args: []string{"build", "-o", "/tmp/scratch/app"},
			WorkingDir: "/workspace/source",
			Env:        []corev1.EnvVar{{Name: "TOKEN", ValueFrom: token}, {Name: "OUT", Value: "/tmp/scratch"}},
			EnvFrom:    fromSecret,
			// The API server defaults a request to its limit.
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			},
		})},
		RestartPolicy:                corev1.RestartPolicyNever,
		ActiveDeadlineSeconds:        pod.Spec.ActiveDeadlineSeconds, // what is left of 30m, checked below
		AutomountServiceAccountToken: ptr.To(false),
		NodeSelector:                 map[string]string{"disk": "ssd"},
		Affinity:                     affinity,
		SecurityContext:              &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000)},
		ImagePullSecrets:             []corev1.LocalObjectReference{{Name: "registry"}},
		PriorityClassName:            priority.Name,
		// The run's toleration, then the two the DefaultTolerationSeconds
		// admission plugin adds to every Pod.
		Tolerations: []corev1.Toleration{toleration,
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		},
		// The API server's defaults, and the priority its admission
		// resolves. The namespace's default ServiceAccount, whose token
		// automountServiceAccountToken keeps out of the Pod: no volume.
		ServiceAccountName:            "default",
		DeprecatedServiceAccount:      "default",
		TerminationGracePeriodSeconds: ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds),
		DNSPolicy:                     corev1.DNSClusterFirst,
		SchedulerName:                 corev1.DefaultSchedulerName,
		Priority:                      ptr.To[int32](10),
		PreemptionPolicy:              ptr.To(corev1.PreemptLowerPriority),
		EnableServiceLinks:            ptr.To(true),
	}
	if diff := cmp.Diff(want, pod.Spec); diff != "" {
		t.Errorf("Pod spec mismatch (-want +got):\n%s", diff)
	}
	if ads := pod.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 1800 || *ads < 1790 {
		t.Errorf("activeDeadlineSeconds = %v, want what is left of 30m", ads)
	}
	wantLabels := map[string]string{"team": "a", runstate.LabelManagedBy: runstate.ManagedByValue, runstate.LabelTaskRun: "build-1"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("Pod labels mismatch (-want +got):\n%s", diff)
	}

	// A run that names a ServiceAccount gets its token, mounted in every step.
	h.Create(t, wrappers.TaskRun("", "build-2", "build").ServiceAccount("builder").Obj())
	pod = h.WaitForPod(t, "build-2-pod")
	if pod.Spec.ServiceAccountName != "builder" || pod.Spec.AutomountServiceAccountToken != nil {
		t.Errorf("serviceAccountName %q, automountServiceAccountToken %v; want builder, unset", pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken)
	}
	var tokenVolume string
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil {
			tokenVolume = v.Name
		}
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return tokenVolume != "" && m.Name == tokenVolume }) {
			t.Errorf("container %s mounts %+v, want the ServiceAccount token among them (volumes %+v)", c.Name, c.VolumeMounts, pod.Spec.Volumes)
		}
	}
}

// TestRestrictedNamespace runs a TaskRun in a namespace that enforces the
// restricted Pod Security level: a Pod without the level's settings is
// refused there, and the run's Pod, which the controller fills them into, is
// admitted.
func TestRestrictedNamespace(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.labelNamespace(t, "restricted")

	plain := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "plain"},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "step-only", Image: "alpine:3"}}},
	}
	err := h.Env.Client.Create(ctx, plain)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Fatalf("creating a Pod without the restricted settings: %v, want it refused by Pod Security", err)
	}

	h.startController(t, time.Hour)
	h.Create(t, wrappers.Task("", "t").Workspace("src").Step("a", "alpine:3", "true").Step("b", "alpine:3", "true").Obj(),
		wrappers.TaskRun("", "run", "t").Obj())
	pod := h.WaitForPod(t, "run-pod")
	// An image's own user is root unless it says otherwise: the Pod names
	// one, so that such images start there, with writable workspaces.
	nonroot := &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
	}
	if diff := cmp.Diff(nonroot, pod.Spec.SecurityContext); diff != "" {
		t.Errorf("Pod securityContext (-want +got):\n%s", diff)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		want := &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		if diff := cmp.Diff(want, c.SecurityContext); diff != "" {
			t.Errorf("container %s securityContext (-want +got):\n%s", c.Name, diff)
		}
	}
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`})
}

// TestMissingSecretStaysPending: a run whose step takes a value from a Secret
// that does not exist stays Pending, its message the kubelet's, until the
// Secret appears and the step starts.
func TestMissingSecretStaysPending(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, wrappers.Task("", "t").Steps(v1.Step{Name: "build", Image: "alpine:3", Script: `test -n "$TOKEN"`,
		Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}}}}).Obj(),
		wrappers.TaskRun("", "run", "t").Obj())

	h.Kubelet(t, "run-pod", func(w *wrappers.PodStatusWrapper) {})
	writeWaiting(t, h, "run-pod", 0, "CreateContainerConfigError", `secret "git" not found`)
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonPending,
		`step "build": CreateContainerConfigError: secret "git" not found`})

	h.Kubelet(t, "run-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "build" (1 of 1)`})
}

// TestMissingClaimStaysPending: a run whose workspace is bound to a
// PersistentVolumeClaim that does not exist stays Pending with the
// scheduler's message, which the test writes as the scheduler would.
func TestMissingClaimStaysPending(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, wrappers.Task("", "t").Workspace("cache").Step("build", "alpine:3", "true").Obj(),
		wrappers.TaskRun("", "run", "t").Workspace(v1.WorkspaceBinding{Name: "cache",
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}}).Obj())
	h.WaitForPod(t, "run-pod")
	const unschedulable = `0/1 nodes are available: persistentvolumeclaim "cache" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := h.Env.Client.Get(context.Background(), h.Key("run-pod"), pod); err != nil {
			return err
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: unschedulable, LastTransitionTime: metav1.Now(),
		}}}
		return h.Env.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("writing the status of Pod run-pod: %v", err)
	}
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonPending,
		`Pod "run-pod" cannot be scheduled: ` + unschedulable})
}

// writeWaiting writes, as the kubelet would, that step i of the Pod waits
// for reason, with message.
func writeWaiting(t *testing.T, h *harness, name string, i int, reason, message string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := h.Env.Client.Get(context.Background(), h.Key(name), pod); err != nil {
			return err
		}
		state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		if n := len(pod.Status.InitContainerStatuses); i < n {
			pod.Status.InitContainerStatuses[i].State = state
		} else {
			pod.Status.ContainerStatuses[i-n].State = state
		}
		return h.Env.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("writing the status of Pod %s: %v", name, err)
	}
}

// TestNamespaceUnreadable: a run whose namespace's labels cannot be read
// (the manager's RBAC lacking get on namespaces, say, which the API reader
// here answers until the test grants it) waits, saying so, and gets its Pod
// once the read succeeds, without a restart.
func TestNamespaceUnreadable(t *testing.T) {
	h := newHarness(t)
	var granted atomic.Bool
	h.StartManager(t, func(mgr ctrl.Manager) error {
		h.writes = &countingClient{Client: mgr.GetClient()}
		r := &controllers.TaskRunReconciler{
			Client:         h.writes,
			APIReader:      &namespaceDenyingReader{Reader: mgr.GetAPIReader(), granted: &granted},
			DefaultTimeout: time.Hour,
		}
		return r.SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache = runcache.Options() })
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "run", "t").Obj())

	prefix := `Pod "run-pod" not created yet: its Namespace's Pod Security level could not be read; retrying: reading the labels of Namespace ` + h.NS + `: namespaces "` + h.NS + `" is forbidden`
	testenv.Eventually(t, func() (bool, string) {
		got := succeededCondition(h.TaskRun(t, "run"))
		return got.Reason == v1.ReasonPending && strings.HasPrefix(got.Message, prefix), fmt.Sprintf("%+v", got)
	}, "the run to wait, saying %q", prefix)
	granted.Store(true)
	h.waitForCondition(t, "run", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`})
}

// namespaceDenyingReader refuses to read Namespaces, as the API server does
// for a manager whose role lacks get on them, until granted.
type namespaceDenyingReader struct {
	client.Reader
	granted *atomic.Bool
}

func (r *namespaceDenyingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok && m.Kind == "Namespace" && !r.granted.Load() {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, key.Name,
			fmt.Errorf(`User "system:serviceaccount:minitask-system:minitask-controller-manager" cannot get resource "namespaces" in API group "" at the cluster scope`))
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
