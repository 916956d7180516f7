package rundecision

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// forbidden is the API server's Forbidden refusal of Pod "p", saying msg.
func forbidden(msg string) error { return apierrors.NewForbidden(podsResource, "p", errors.New(msg)) }

// TestClassifyRefusal feeds ClassifyRefusal the errors the API server gives,
// with the messages its admission plugins, authorizer and webhook
// dispatcher write.
func TestClassifyRefusal(t *testing.T) {
	status := func(code int32, reason metav1.StatusReason, msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
	}
	final := Refusal{Permanent: true}
	tests := map[string]struct {
		err  error
		want Refusal
	}{
		// Refusals that cannot pass.
		"invalid": {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p",
			field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), " ", "bad")}), final},
		"too large for the API server": {apierrors.NewRequestEntityTooLargeError("limit is 3145728"), final},
		"413 without a Status body":    {apierrors.NewGenericServerResponse(http.StatusRequestEntityTooLarge, "POST", podsResource, "", "", 0, false), final},
		"too large for etcd":           {apierrors.NewInternalError(errors.New("etcdserver: request is too large")), final},
		"bad request":                  {apierrors.NewBadRequest("the body could not be decoded"), final},
		"Pod Security":                 {forbidden(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`), final},
		"LimitRange":                   {forbidden("maximum memory usage per Container is 1Gi, but limit is 2Gi"), final},
		"quota that requires limits":   {forbidden("failed quota: compute: must specify limits.cpu for: step-a"), final},
		"namespace being deleted":      {forbidden("unable to create new content in namespace ns because it is being terminated"), final},
		"webhook denial, 400": {status(http.StatusBadRequest, metav1.StatusReasonBadRequest,
			`admission webhook "deny.example.com" denied the request: no`), final},
		"webhook denial, 403": {status(http.StatusForbidden, metav1.StatusReasonForbidden,
			`admission webhook "deny.example.com" denied the request: no`), final},
		"webhook denial with a 500 of its choosing": {status(http.StatusInternalServerError, metav1.StatusReasonInternalError,
			`admission webhook "deny.example.com" denied the request: try never`), final},
		"admission policy denial": {forbidden(`ValidatingAdmissionPolicy 'no-latest' with binding 'b' denied request: failed expression: ...`), final},

		// Refusals that can pass.
		"ServiceAccount not created yet": {
			forbidden(`error looking up service account ns/default: serviceaccount "default" not found`),
			Refusal{Cause: CauseServiceAccount}},
		"ServiceAccount not created yet, older API servers": {
			forbidden("service account ns/default was not found, retry after the service account is created"),
			Refusal{Cause: CauseServiceAccount}},
		"quota not yet computed": {
			forbidden("status unknown for quota: compute, resources: pods"),
			Refusal{Cause: CauseQuotaUnknown}},
		"quota exceeded": {
			forbidden("exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10"),
			Refusal{Cause: CauseQuotaExceeded}},
		"the manager's missing permission": {
			forbidden(`User "system:serviceaccount:minitask-system:minitask" cannot create resource "pods" in API group "" in the namespace "ns"`),
			Refusal{Cause: CauseRBAC}},
		"the manager's missing permission on finalizers": {
			forbidden(`cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: User "m" cannot update resource "taskruns/finalizers" in API group "minitask.dev" in the namespace "ns"`),
			Refusal{Cause: CauseRBAC}},
		"webhook unreachable": {
			apierrors.NewInternalError(errors.New(`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.svc:443/validate?timeout=10s": dial tcp 10.0.0.1:443: connect: connection refused`)),
			Refusal{Cause: CauseWebhook}},
		"webhook timed out": {
			apierrors.NewInternalError(errors.New(`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.svc:443/validate?timeout=10s": context deadline exceeded`)),
			Refusal{Cause: CauseWebhook}},
		"request timed out":   {apierrors.NewTimeoutError("request did not complete within requested timeout", 0), Refusal{Cause: CauseAPIServer}},
		"server busy":         {apierrors.NewTooManyRequests("busy", 1), Refusal{Cause: CauseAPIServer}},
		"server timeout":      {apierrors.NewServerTimeout(podsResource, "create", 1), Refusal{Cause: CauseAPIServer}},
		"internal error":      {apierrors.NewInternalError(errors.New("etcdserver: leader changed")), Refusal{Cause: CauseAPIServer}},
		"service unavailable": {apierrors.NewServiceUnavailable("starting"), Refusal{Cause: CauseAPIServer}},
		"not an API error":    {errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), Refusal{Cause: CauseAPIServer}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ClassifyRefusal(tc.err)); diff != "" {
				t.Errorf("ClassifyRefusal(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

// TestRefused checks the outcome of a run whose Pod the API server refused:
// it ends for a refusal that cannot pass, and waits, saying why, for one that
// can; a Pod built for a namespace remembered as not restricted that Pod
// Security refuses has the namespace read again.
func TestRefused(t *testing.T) {
	podSecurity := forbidden(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "step-a", "step-c" must set securityContext.allowPrivilegeEscalation=false)`)
	quota := forbidden("exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10")
	invalid := apierrors.NewBadRequest("the body could not be decoded")
	type want struct {
		Outcome         *Outcome
		Retry           bool
		RereadNamespace bool
	}
	tests := map[string]struct {
		run                    *v1.TaskRun
		err                    error
		rememberedUnrestricted bool
		want                   want
	}{
		"for good: the run ends": {
			err:  invalid,
			want: want{Outcome: Failed(v1.ReasonPodFailed, "the API server rejected the Pod: %v", invalid)},
		},
		"for now: the run waits, saying why": {
			err:  quota,
			want: want{Outcome: Unknown(v1.ReasonPending, `Pod "run-pod" not created yet: a ResourceQuota is exceeded; retrying: %v`, quota), Retry: true},
		},
		"a retry's Pod, for now": {
			run:  withAttempts(wrappers.TaskRun("ns", "run", "t").Obj(), "run-pod"),
			err:  quota,
			want: want{Outcome: Unknown(v1.ReasonPending, `Pod "run-pod-retry1" not created yet: a ResourceQuota is exceeded; retrying: %v`, quota), Retry: true},
		},
		"by Pod Security, for a namespace remembered as not restricted: read again": {
			err: podSecurity, rememberedUnrestricted: true,
			want: want{Outcome: Unknown(v1.ReasonPending, `Pod "run-pod" not created yet: %s; retrying: %v`, CauseNamespaceRelabelled, podSecurity),
				Retry: true, RereadNamespace: true},
		},
		"by Pod Security, for a namespace just read: the run ends PodConfigFailed, naming the steps": {
			err: podSecurity,
			want: want{Outcome: Failed(v1.ReasonPodConfigFailed,
				`Pod "run-pod" asks for what its namespace's Pod Security level forbids: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (steps "a", "c" must set securityContext.allowPrivilegeEscalation=false)`)},
		},
		"by a quota, for a namespace remembered as not restricted: the namespace stands": {
			err: quota, rememberedUnrestricted: true,
			want: want{Outcome: Unknown(v1.ReasonPending, `Pod "run-pod" not created yet: a ResourceQuota is exceeded; retrying: %v`, quota), Retry: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := tc.run
			if run == nil {
				run = wrappers.TaskRun("ns", "run", "t").Obj()
			}
			a := attemptOf(run, nil, testTime)
			var got want
			got.Outcome, got.Retry, got.RereadNamespace = a.Refused(tc.err, threeStepPod(), tc.rememberedUnrestricted)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Refused() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodSecurityViolation feeds PodSecurityViolation Pod Security's
// refusals as its policy package words them, of Pods whose containers' names
// hold their steps' whole, or shortened with a hash.
func TestPodSecurityViolation(t *testing.T) {
	long := strings.Repeat("s", 63)
	pod := podOf(wrappers.Task("ns", "t").Step("build", "alpine", "true").Step(long, "alpine", "true").Step("test", "alpine", "true"))
	longContainer := runstate.StepContainer(long)
	refusal := func(detail string) error {
		return apierrors.NewForbidden(podsResource, "run-pod", errors.New(`violates PodSecurity "baseline:latest": `+detail))
	}
	tests := map[string]struct {
		err  error
		pod  *corev1.Pod
		want string
	}{
		"one step": {
			err:  refusal(`unrestricted capabilities (container "step-build" must not include "SYS_ADMIN" in securityContext.capabilities.add)`),
			pod:  pod,
			want: `violates PodSecurity "baseline:latest": unrestricted capabilities (step "build" must not include "SYS_ADMIN" in securityContext.capabilities.add)`,
		},
		"several rules, several steps, one named by its annotation": {
			err: refusal(`privileged (containers "step-build", "` + longContainer + `" must not set securityContext.privileged=true), ` +
				`runAsNonRoot != true (pod or container "step-test" must set securityContext.runAsNonRoot=true)`),
			pod: pod,
			want: `violates PodSecurity "baseline:latest": privileged (steps "build", "` + long + `" must not set securityContext.privileged=true), ` +
				`runAsNonRoot != true (pod or step "test" must set securityContext.runAsNonRoot=true)`,
		},
		"a container that runs no step keeps its name": {
			err:  refusal(`privileged (containers "step-build", "db" must not set securityContext.privileged=true)`),
			pod:  pod,
			want: `violates PodSecurity "baseline:latest": privileged (containers "step-build", "db" must not set securityContext.privileged=true)`,
		},
		"no Pod": {
			err:  refusal(`privileged (container "step-build" must not set securityContext.privileged=true)`),
			want: `violates PodSecurity "baseline:latest": privileged (container "step-build" must not set securityContext.privileged=true)`,
		},
		"a Pod-level rule names no container": {
			err:  refusal(`host namespaces (hostNetwork=true)`),
			pod:  pod,
			want: `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodSecurityViolation(tc.err, tc.pod)); diff != "" {
				t.Errorf("PodSecurityViolation() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusedByPodSecurity(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"Pod Security": {apierrors.NewForbidden(podsResource, "run-pod",
			errors.New(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`)), true},
		"another Forbidden":                  {apierrors.NewForbidden(podsResource, "run-pod", errors.New(`exceeded quota: q`)), false},
		"not Forbidden, naming Pod Security": {apierrors.NewBadRequest(`violates PodSecurity "restricted:latest"`), false},
		"not an API error":                   {errors.New("connection refused"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RefusedByPodSecurity(tc.err)); diff != "" {
				t.Errorf("RefusedByPodSecurity(%v) mismatch (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

func TestRefusedByContainerLimitRange(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"a minimum per Container":    {forbidden("minimum cpu usage per Container is 100m, but request is 0"), true},
		"a ratio per Container":      {forbidden("cpu max limit to request ratio per Container is 4, but provided ratio is +Inf"), true},
		"a maximum per Pod":          {forbidden("maximum memory usage per Pod is 1Gi, but limit is 2Gi"), false},
		"another Forbidden":          {forbidden("exceeded quota: q"), false},
		"not Forbidden, the same":    {apierrors.NewBadRequest("minimum cpu usage per Container is 100m, but request is 0"), false},
		"not an API error, the same": {errors.New("minimum cpu usage per Container is 100m, but request is 0"), false},
		"no error":                   {nil, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RefusedByContainerLimitRange(tc.err)); diff != "" {
				t.Errorf("RefusedByContainerLimitRange(%v) mismatch (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}
