package rundecision

import (
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file decides what a refusal to create a run's Pod means for the run:
// retried, because it can pass, or final, because the same Pod would be
// refused every time.

// Causes of a refusal that can pass, as the Pending condition's message gives them.
const (
	CauseServiceAccount = "its ServiceAccount does not exist yet"
	CauseQuotaUnknown   = "a ResourceQuota is not yet computed"
	CauseQuotaExceeded  = "a ResourceQuota is exceeded"
	CauseRBAC           = "the manager lacks permission (RBAC)"
	CauseWebhook        = "an admission webhook failed or did not answer"
	CauseAPIServer      = "the API server did not take it"
	// CauseNamespaceUnread: the namespace's labels could not be read, and a
	// Pod built without knowing would be one a restricted namespace refuses
	// for good.
	CauseNamespaceUnread = "its Namespace's Pod Security level could not be read"
	// CauseNamespaceRelabelled: the Pod was built for a namespace remembered
	// as not restricted, and Pod Security refused it: the namespace is read
	// again.
	CauseNamespaceRelabelled = "its Namespace's Pod Security level changed since it was read"
)

// Refusal is what the controller makes of the API server's refusal to create
// a run's Pod.
type Refusal struct {
	// Permanent says that the same Pod would be refused every time, so the
	// run ends PodFailed.
	Permanent bool
	// Cause says what the run waits for, for a refusal that can pass.
	Cause string
}

// rbacDenied matches the authorizer's message, `User "U" cannot VERB resource "R" ...`.
var rbacDenied = regexp.MustCompile(`cannot [a-z]+ resource "`)

// ClassifyRefusal says whether the API server's error err, in answer to the
// creation of a run's Pod, can pass. Refusals that cannot: a denial by an
// admission webhook or policy, an invalid Pod, one too large for the API
// server or for etcd, a malformed request, and every Forbidden but those below (Pod
// Security, a LimitRange, a quota that requires what the Pod does not set, a
// namespace being deleted). Refusals that can: a ServiceAccount that its
// controller has not created yet (a brand-new namespace), a ResourceQuota not
// yet computed or full until other Pods end, the manager's missing permission,
// which its installer can grant, a webhook that failed or timed out, and
// every error that says nothing of the Pod (the API server busy or down).
func ClassifyRefusal(err error) Refusal {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "denied the request") || strings.Contains(msg, "denied request"):
		// `admission webhook "W" denied the request: ...`, with whatever code
		// the webhook chose; `ValidatingAdmissionPolicy 'P' with binding 'B'
		// denied request: ...`.
		return Refusal{Permanent: true}
	case apierrors.IsInvalid(err), apierrors.IsRequestEntityTooLargeError(err), apierrors.IsBadRequest(err):
		return Refusal{Permanent: true}
	case strings.Contains(msg, "etcdserver: request is too large"):
		// A Pod under the API server's 3 MiB but over what etcd stores
		// (1.5 MiB by default) comes back as a 500 with etcd's message.
		return Refusal{Permanent: true}
	case apierrors.IsForbidden(err):
		return classifyForbidden(msg)
	case strings.Contains(msg, "failed calling webhook"):
		return Refusal{Cause: CauseWebhook}
	default:
		return Refusal{Cause: CauseAPIServer}
	}
}

// classifyForbidden sorts the Forbidden refusals: a few pass with time, the
// others are admission saying no to this Pod.
func classifyForbidden(msg string) Refusal {
	switch {
	case strings.Contains(msg, "looking up service account"),
		strings.Contains(msg, "service account") && strings.Contains(msg, "was not found"):
		return Refusal{Cause: CauseServiceAccount}
	case strings.Contains(msg, "status unknown for quota"):
		return Refusal{Cause: CauseQuotaUnknown}
	case strings.Contains(msg, "exceeded quota"):
		return Refusal{Cause: CauseQuotaExceeded}
	case rbacDenied.MatchString(msg):
		return Refusal{Cause: CauseRBAC}
	default:
		return Refusal{Permanent: true}
	}
}

// Refused decides the outcome of a run whose Pod, pod, the API server
// refused with err. A Pod built for a namespace remembered as not restricted
// (rememberedUnrestricted) that Pod Security refuses may have met a namespace
// that enforces the level since: rereadNamespace says to forget that memory,
// and the run waits for the namespace to be read again. Pod Security's
// refusal of a Pod built for what the namespace was just read to be is the
// Task's asking for what the level forbids (a step's securityContext): the
// run ends PodConfigFailed, naming the steps and the rule. Any other
// permanent refusal ends the run PodFailed: retrying would only storm the
// API server. Any other waits, saying why, and retry says the reconcile is
// retried (with the work queue's backoff, never later than the run's
// deadline).
func (a *Attempt) Refused(err error, pod *corev1.Pod, rememberedUnrestricted bool) (o *Outcome, retry, rereadNamespace bool) {
	forbiddenBySecurity := RefusedByPodSecurity(err)
	if forbiddenBySecurity && rememberedUnrestricted {
		return PodRefused(a.PodName, CauseNamespaceRelabelled, err), true, true
	}
	if forbiddenBySecurity {
		return PodForbiddenBySecurity(a.PodName, PodSecurityViolation(err, pod)), false, false
	}
	refused := ClassifyRefusal(err)
	if refused.Permanent {
		return PodRejected(err), false, false
	}
	return PodRefused(a.PodName, refused.Cause, err), true, false
}

// RefusedByContainerLimitRange reports whether err is the LimitRange
// admission plugin's refusal of a container's requests or limits: "minimum
// cpu usage per Container is 100m, but request is 0", "cpu max limit to
// request ratio per Container is 4, but provided ratio is +Inf". A chained
// Pod's containers request nothing of what the Pod requests once, which such
// a LimitRange refuses: the Pod is built again with init containers, which
// keep the steps' own requests.
func RefusedByContainerLimitRange(err error) bool {
	return err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "per Container")
}

// RefusedByPodSecurity reports whether err is Pod Security admission's
// refusal of a Pod: `pods "P" is forbidden: violates PodSecurity "L:V": ...`.
func RefusedByPodSecurity(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "violates PodSecurity")
}

// podSecurityViolation is where Pod Security's own words start in its
// refusal, after the API server's `pods "P" is forbidden: `.
const podSecurityViolation = "violates PodSecurity"

// podSecurityContainers matches the containers Pod Security names in a
// rule's detail: `container "C"` or `containers "C1", "C2"` (its policy
// package's pluralize and joinQuote).
var podSecurityContainers = regexp.MustCompile(`\bcontainers? ("[^"]*"(?:, "[^"]*")*)`)

// PodSecurityViolation returns Pod Security's refusal err of pod from
// "violates PodSecurity" on, each rule's containers named as the steps they
// run: `unrestricted capabilities (step "build" must not include "SYS_ADMIN"
// in securityContext.capabilities.add)`. A list that names a container that
// runs no step is left as it is.
func PodSecurityViolation(err error, pod *corev1.Pod) string {
	msg := err.Error()
	if i := strings.Index(msg, podSecurityViolation); i >= 0 {
		msg = msg[i:]
	}
	steps := map[string]string{}
	if pod != nil {
		for _, s := range runstate.Steps(pod) {
			steps[s.Container] = s.Name
		}
	}
	return podSecurityContainers.ReplaceAllStringFunc(msg, func(match string) string {
		list := podSecurityContainers.FindStringSubmatch(match)[1]
		var names []string
		for _, quoted := range strings.Split(list, ", ") {
			container, err := strconv.Unquote(quoted)
			step, ok := steps[container]
			if err != nil || !ok {
				return match
			}
			names = append(names, strconv.Quote(step))
		}
		if len(names) == 1 {
			return "step " + names[0]
		}
		return "steps " + strings.Join(names, ", ")
	})
}
