// Package conditiontime is the validating webhook that refuses a TaskRun
// condition's lastTransitionTime that Go cannot read, unless the write
// leaves it as stored.
//
// status.conditions holds metav1.Condition, which takes no marker, so its
// lastTransitionTime has the date-time format alone, which admits
// 2024-05-01t10:00:00z and any zone offset (+25:00); one such time makes
// every typed LIST of TaskRuns fail to decode, the manager's cache with it.
// A CEL rule in the CRD cannot refuse it and still let a stored one be:
// CEL reads a date-time value as a timestamp, so the rule fails to evaluate
// on it, and the API server ratchets no evaluation error. Every write of a
// run that holds one (a label, a finalizer's removal, the storage
// migration's rewrite) was refused.
//
// The match condition does the judging, on the object as JSON: a
// condition's lastTransitionTime that v1.TimePattern refuses and that
// the old object's condition of the same type does not hold as it is. Only
// such writes reach the webhook, which refuses them naming each field; with
// failurePolicy Fail they are refused as well when the webhook is down, and
// every other write, the controller's status writes among them, never
// depends on it. It matches status updates alone: a write to the main
// resource cannot change status, and a create's status is dropped.
package conditiontime

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Path is where the webhook is served, as in the marker below.
const Path = "/validate-minitask-dev-taskrun-condition-times"

// The match condition repeats v1.TimePattern, which a marker cannot
// name: TestWebhookConfiguration holds the two to each other, and
// TestMatchConditionJudgesAsTheHandler the condition to the handler.
// +kubebuilder:webhook:path=/validate-minitask-dev-taskrun-condition-times,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=taskruns/status,verbs=update,versions=v1,matchPolicy=Equivalent,name=vtaskrun-condition-times.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"changes-a-time-go-cannot-read","expression":"has(object.status) && has(object.status.conditions) && object.status.conditions.exists(c, has(c.lastTransitionTime) && type(c.lastTransitionTime) == string && !c.lastTransitionTime.matches(r'^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$') && !(oldObject != null && has(oldObject.status) && has(oldObject.status.conditions) && oldObject.status.conditions.exists(o, has(o.type) && has(c.type) && o.type == c.type && has(o.lastTransitionTime) && o.lastTransitionTime == c.lastTransitionTime)))"}]}`

// Register serves the webhook on mgr's webhook server.
func Register(mgr ctrl.Manager) {
	recoverPanic := true
	mgr.GetWebhookServer().Register(Path, &admission.Webhook{Handler: handler{}, RecoverPanic: &recoverPanic})
}
