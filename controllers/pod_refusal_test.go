package controllers

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestClassifyRefusal feeds classifyRefusal the errors the API server gives,
// with the messages its admission plugins, authorizer and webhook
// dispatcher write.
func TestClassifyRefusal(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	forbidden := func(msg string) error { return apierrors.NewForbidden(pods, "p", errors.New(msg)) }
	status := func(code int32, reason metav1.StatusReason, msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
	}
	final := refusal{permanent: true}
	tests := map[string]struct {
		err  error
		want refusal
	}{
		// Refusals that cannot pass.
		"invalid": {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p",
			field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), " ", "bad")}), final},
		"too large for the API server": {apierrors.NewRequestEntityTooLargeError("limit is 3145728"), final},
		"413 without a Status body":    {apierrors.NewGenericServerResponse(http.StatusRequestEntityTooLarge, "POST", pods, "", "", 0, false), final},
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
			refusal{cause: causeServiceAccount}},
		"ServiceAccount not created yet, older API servers": {
			forbidden("service account ns/default was not found, retry after the service account is created"),
			refusal{cause: causeServiceAccount}},
		"quota not yet computed": {
			forbidden("status unknown for quota: compute, resources: pods"),
			refusal{cause: causeQuotaUnknown}},
		"quota exceeded": {
			forbidden("exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10"),
			refusal{cause: causeQuotaExceeded}},
		"the manager's missing permission": {
			forbidden(`User "system:serviceaccount:minitask-system:minitask" cannot create resource "pods" in API group "" in the namespace "ns"`),
			refusal{cause: causeRBAC}},
		"the manager's missing permission on finalizers": {
			forbidden(`cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: User "m" cannot update resource "taskruns/finalizers" in API group "minitask.dev" in the namespace "ns"`),
			refusal{cause: causeRBAC}},
		"webhook unreachable": {
			apierrors.NewInternalError(errors.New(`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.svc:443/validate?timeout=10s": dial tcp 10.0.0.1:443: connect: connection refused`)),
			refusal{cause: causeWebhook}},
		"webhook timed out": {
			apierrors.NewInternalError(errors.New(`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.svc:443/validate?timeout=10s": context deadline exceeded`)),
			refusal{cause: causeWebhook}},
		"request timed out":   {apierrors.NewTimeoutError("request did not complete within requested timeout", 0), refusal{cause: causeAPIServer}},
		"server busy":         {apierrors.NewTooManyRequests("busy", 1), refusal{cause: causeAPIServer}},
		"server timeout":      {apierrors.NewServerTimeout(pods, "create", 1), refusal{cause: causeAPIServer}},
		"internal error":      {apierrors.NewInternalError(errors.New("etcdserver: leader changed")), refusal{cause: causeAPIServer}},
		"service unavailable": {apierrors.NewServiceUnavailable("starting"), refusal{cause: causeAPIServer}},
		"not an API error":    {errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), refusal{cause: causeAPIServer}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, classifyRefusal(tc.err), cmp.AllowUnexported(refusal{})); diff != "" {
				t.Errorf("classifyRefusal(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}
