package controllers

import (
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// This file decides what a refusal to create a run's Pod means for the run:
// retried, because it can pass, or final, because the same Pod would be
// refused every time. It is pure, so every refusal is tested by a table.

// Causes of a refusal that can pass, as the Pending condition's message gives them.
const (
	causeServiceAccount = "its ServiceAccount does not exist yet"
	causeQuotaUnknown   = "a ResourceQuota is not yet computed"
	causeQuotaExceeded  = "a ResourceQuota is exceeded"
	causeRBAC           = "the manager lacks permission (RBAC)"
	causeWebhook        = "an admission webhook failed or did not answer"
	causeAPIServer      = "the API server did not take it"
)

// refusal is what the controller makes of the API server's refusal to create
// a run's Pod.
type refusal struct {
	// permanent says that the same Pod would be refused every time, so the
	// run ends PodFailed.
	permanent bool
	// cause says what the run waits for, for a refusal that can pass.
	cause string
}

// rbacDenied matches the authorizer's message, `User "U" cannot VERB resource "R" ...`.
var rbacDenied = regexp.MustCompile(`cannot [a-z]+ resource "`)

// classifyRefusal says whether the API server's error err, in answer to the
// creation of a run's Pod, can pass. Refusals that cannot: a denial by an
// admission webhook or policy, an invalid Pod, one too large for the API
// server or for etcd, a malformed request, and every Forbidden but those below (Pod
// Security, a LimitRange, a quota that requires what the Pod does not set, a
// namespace being deleted). Refusals that can: a ServiceAccount that its
// controller has not created yet (a brand-new namespace), a ResourceQuota not
// yet computed or full until other Pods end, the manager's missing permission,
// which its installer can grant, a webhook that failed or timed out, and
// every error that says nothing of the Pod (the API server busy or down).
func classifyRefusal(err error) refusal {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "denied the request") || strings.Contains(msg, "denied request"):
		// `admission webhook "W" denied the request: ...`, with whatever code
		// the webhook chose; `ValidatingAdmissionPolicy 'P' with binding 'B'
		// denied request: ...`.
		return refusal{permanent: true}
	case apierrors.IsInvalid(err), apierrors.IsRequestEntityTooLargeError(err), apierrors.IsBadRequest(err):
		return refusal{permanent: true}
	case strings.Contains(msg, "etcdserver: request is too large"):
		// A Pod under the API server's 3 MiB but over what etcd stores
		// (1.5 MiB by default) comes back as a 500 with etcd's message.
		return refusal{permanent: true}
	case apierrors.IsForbidden(err):
		return classifyForbidden(msg)
	case strings.Contains(msg, "failed calling webhook"):
		return refusal{cause: causeWebhook}
	default:
		return refusal{cause: causeAPIServer}
	}
}

// classifyForbidden sorts the Forbidden refusals: a few pass with time, the
// others are admission saying no to this Pod.
func classifyForbidden(msg string) refusal {
	switch {
	case strings.Contains(msg, "looking up service account"),
		strings.Contains(msg, "service account") && strings.Contains(msg, "was not found"):
		return refusal{cause: causeServiceAccount}
	case strings.Contains(msg, "status unknown for quota"):
		return refusal{cause: causeQuotaUnknown}
	case strings.Contains(msg, "exceeded quota"):
		return refusal{cause: causeQuotaExceeded}
	case rbacDenied.MatchString(msg):
		return refusal{cause: causeRBAC}
	default:
		return refusal{permanent: true}
	}
}

// refusedByContainerLimitRange reports whether err is the LimitRange
// admission plugin's refusal of a container's requests or limits: "minimum
// cpu usage per Container is 100m, but request is 0", "cpu max limit to
// request ratio per Container is 4, but provided ratio is +Inf".
func refusedByContainerLimitRange(err error) bool {
	return err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "per Container")
}
