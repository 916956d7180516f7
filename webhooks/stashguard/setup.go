// Package stashguard is the validating webhook that keeps the conversion
// annotation conversion's own channel, never an API, and keeps every object
// readable through v1alpha1 (API.md, "Conversion under stress"):
//
//   - A v1alpha1 write is judged after conversion by every v1beta1 rule (the
//     v1beta1 CRD's schema, list types and CEL, TaskRun spec immutability
//     included), so that a hand-edited minitask.dev/conversion-data cannot
//     store what v1beta1 refuses. v1beta1 writes need no webhook for this:
//     the API server applies those rules itself.
//   - A write that would take an object's v1alpha1 annotations, stash
//     included, past the API server's 256 KiB is refused, with the size.
//   - A v1alpha1 write to an object whose stash conversion had to omit
//     (minitask.dev/conversion-data-omitted) is refused: it would lose
//     what the stash would have held.
//   - A run's pinned status.taskSpec is set only through the status
//     subresource, an inline run's to its spec.taskSpec, and never changed
//     or removed after (pinned.go).
//   - A v1alpha1 write to a TaskRun's main resource whose stash would change
//     its status (results, attempts, steps, conditions) is refused: the API
//     server keeps such a write from changing status only in the version it
//     was written in, before conversion.
//
// Its match conditions send it every v1alpha1 write, which needs the manager
// anyway (conversion), and of v1beta1 writes only those of objects whose
// text could take the annotations past the limit: the condition bounds the
// stash's size from above, counting six bytes (JSON's worst escape, \u003c)
// for every character of a field the stash carries, four for every
// character of an annotation value, and a generous constant per list item,
// map entry and quantity (whose canonical text may be up to 32 characters
// longer than the one written). A TaskRun whose podTemplate has an affinity
// or a securityContext, whose nesting CEL cannot bound cheaply, is always
// sent. Every other v1beta1 write keeps working while the webhook is down.
//
// The controller writes v1 from release 6, and every v1 write is sent: its
// status writes wait for the webhook. A v1 write of a TaskRun that no typed
// decode takes (a time release 2 let in) is refused; a v1 status write is
// judged for that alone, and is not decoded at all while the TaskRun CRD's
// storedVersions, which the manager watches (internal/storedversions), says
// no such run can remain.
package stashguard

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/config/crd"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The paths the webhooks are served at, as in the markers below.
const (
	TaskPath    = "/validate-minitask-dev-task-stash"
	TaskRunPath = "/validate-minitask-dev-taskrun-stash"
)

// +kubebuilder:webhook:path=/validate-minitask-dev-task-stash,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=tasks,verbs=create;update,versions=v1alpha1;v1beta1;v1,matchPolicy=Exact,name=vtask-stash.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"v1alpha1-or-big","expression":"request.requestKind.version != 'v1beta1' || has(object.metadata.annotations) && 'minitask.dev/conversion-data' in object.metadata.annotations || (has(object.metadata.annotations) ? object.metadata.annotations.map(k, size(k) + 4 * size(object.metadata.annotations[k])).sum() : 0) + (has(object.spec) && has(object.spec.description) ? 6 * size(object.spec.description) : 0) + (has(object.spec) && has(object.spec.params) ? object.spec.params.map(p, 128 + 6 * (size(p.name) + (has(p.description) ? size(p.description) : 0) + (has(p.default) ? size(p.default) : 0))).sum() : 0) + (has(object.spec) && has(object.spec.workspaces) ? object.spec.workspaces.map(w, 128 + 6 * (size(w.?name.orValue('')) + size(w.?description.orValue('')) + size(w.?mountPath.orValue('')))).sum() : 0) + (has(object.spec) && has(object.spec.results) ? object.spec.results.map(r, 64 + 6 * (size(r.?name.orValue('')) + size(r.?description.orValue('')))).sum() : 0) + (has(object.spec) && has(object.spec.steps) ? object.spec.steps.map(s, 256 + 6 * size(s.?name.orValue('')) + s.?command.orValue([]).map(c, 8 + 6 * size(c)).sum() + s.?args.orValue([]).map(c, 8 + 6 * size(c)).sum() + 6 * size(s.?workingDir.orValue('')) + s.?env.orValue([]).map(e, 384 + 6 * (size(e.?name.orValue('')) + size(e.?value.orValue('')) + size(e.?valueFrom.?secretKeyRef.?name.orValue('')) + size(e.?valueFrom.?secretKeyRef.?key.orValue('')) + size(e.?valueFrom.?configMapKeyRef.?name.orValue('')) + size(e.?valueFrom.?configMapKeyRef.?key.orValue('')) + size(e.?valueFrom.?fieldRef.?apiVersion.orValue('')) + size(e.?valueFrom.?fieldRef.?fieldPath.orValue('')) + size(e.?valueFrom.?resourceFieldRef.?containerName.orValue('')) + size(e.?valueFrom.?resourceFieldRef.?resource.orValue('')) + size(e.?valueFrom.?fileKeyRef.?volumeName.orValue('')) + size(e.?valueFrom.?fileKeyRef.?path.orValue('')) + size(e.?valueFrom.?fileKeyRef.?key.orValue(''))) + size(string(e.?valueFrom.?resourceFieldRef.?divisor.orValue('')))).sum() + s.?envFrom.orValue([]).map(f, 128 + 6 * (size(f.?prefix.orValue('')) + size(f.?configMapRef.?name.orValue('')) + size(f.?secretRef.?name.orValue('')))).sum() + (has(s.computeResources) ? 96 + s.computeResources.?limits.orValue({}).map(k, 48 + 6 * size(k) + size(string(s.computeResources.limits[k]))).sum() + s.computeResources.?requests.orValue({}).map(k, 48 + 6 * size(k) + size(string(s.computeResources.requests[k]))).sum() + s.computeResources.?claims.orValue([]).map(c, 48 + 6 * (size(c.?name.orValue('')) + size(c.?request.orValue('')))).sum() : 0) + (has(s.onError) ? 16 + 6 * size(s.onError) : 0)).sum() : 0) + 1024 > 262144"}]}`
// +kubebuilder:webhook:path=/validate-minitask-dev-taskrun-stash,mutating=false,failurePolicy=fail,sideEffects=None,groups=minitask.dev,resources=taskruns;taskruns/status,verbs=create;update,versions=v1alpha1;v1beta1;v1,matchPolicy=Exact,name=vtaskrun-stash.minitask.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"v1alpha1-or-big","expression":"request.requestKind.version != 'v1beta1' || !has(request.subResource) && has(object.metadata.annotations) && 'minitask.dev/conversion-data' in object.metadata.annotations || !has(request.subResource) && (has(object.metadata.annotations) ? object.metadata.annotations.map(k, size(k) + 4 * size(object.metadata.annotations[k])).sum() : 0) + (has(object.spec) && has(object.spec.params) ? object.spec.params.map(p, 64 + 6 * (size(p.name) + size(p.value))).sum() : 0) + (has(object.spec) && has(object.spec.timeout) ? 2 * size(object.spec.timeout) : 0) + (has(object.status) && has(object.status.conditions) ? object.status.conditions.map(c, 256 + 6 * ((has(c.type) ? size(c.type) : 0) + (has(c.status) ? size(c.status) : 0) + (has(c.reason) ? size(c.reason) : 0) + (has(c.message) ? size(c.message) : 0))).sum() : 0) + (has(object.status) && has(object.status.steps) ? object.status.steps.map(s, 256 + 6 * ((has(s.name) ? size(s.name) : 0) + (has(s.reason) ? size(s.reason) : 0))).sum() : 0) + (has(object.spec) && has(object.spec.workspaces) ? object.spec.workspaces.map(w, 384 + 6 * (size(w.?name.orValue('')) + size(w.?emptyDir.?medium.orValue('')) + size(w.?persistentVolumeClaim.?claimName.orValue('')) + size(w.?configMap.?name.orValue('')) + size(w.?secret.?secretName.orValue(''))) + size(string(w.?emptyDir.?sizeLimit.orValue(''))) + w.?configMap.?items.orValue([]).map(i, 64 + 6 * (size(i.?key.orValue('')) + size(i.?path.orValue('')))).sum() + w.?secret.?items.orValue([]).map(i, 64 + 6 * (size(i.?key.orValue('')) + size(i.?path.orValue('')))).sum()).sum() : 0) + (has(object.spec) && has(object.spec.serviceAccountName) ? 32 + 6 * size(object.spec.serviceAccountName) : 0) + (has(object.spec) && has(object.spec.podTemplate) ? (has(object.spec.podTemplate.affinity) || has(object.spec.podTemplate.securityContext) ? 262144 : 256 + object.spec.podTemplate.?nodeSelector.orValue({}).map(k, 16 + 6 * (size(k) + size(object.spec.podTemplate.nodeSelector[k]))).sum() + object.spec.podTemplate.?tolerations.orValue([]).map(t, 160 + 6 * (size(t.?key.orValue('')) + size(t.?operator.orValue('')) + size(t.?value.orValue('')) + size(t.?effect.orValue('')))).sum() + object.spec.podTemplate.?imagePullSecrets.orValue([]).map(p, 16 + 6 * size(p.?name.orValue(''))).sum() + 6 * size(object.spec.podTemplate.?priorityClassName.orValue(''))) : 0) + (has(object.spec) && has(object.spec.retries) ? 32 : 0) + (has(object.spec) && has(object.spec.retryOn) ? 16 + object.spec.retryOn.map(r, 8 + 6 * size(r)).sum() : 0) + (has(object.spec) && has(object.spec.ttlSecondsAfterFinished) ? 48 : 0) + (has(object.status) && has(object.status.results) ? object.status.results.map(r, 64 + 6 * (size(r.?name.orValue('')) + size(r.?value.orValue('')))).sum() : 0) + (has(object.status) && has(object.status.attempts) ? object.status.attempts.map(a, 256 + 6 * (size(a.?podName.orValue('')) + size(a.?reason.orValue('')) + size(a.?message.orValue('')))).sum() : 0) + 1024 > 262144"}]}`

// Register serves both webhooks on mgr's webhook server. storedVersions,
// if not nil, tells the TaskRun guard when a v1 status write need not be
// decoded (judgeV1Write); nil, every one is.
func Register(mgr ctrl.Manager, storedVersions StoredVersions) error {
	taskRules, err := loadHubRules(crd.TasksFile, v1beta1.GroupVersion.Version)
	if err != nil {
		return fmt.Errorf("loading the v1beta1 Task rules: %w", err)
	}
	runRules, err := loadHubRules(crd.TaskRunsFile, v1beta1.GroupVersion.Version)
	if err != nil {
		return fmt.Errorf("loading the v1beta1 TaskRun rules: %w", err)
	}
	server := mgr.GetWebhookServer()
	server.Register(TaskPath, webhook(newTaskGuard(taskRules)))
	runs := newTaskRunGuard(runRules)
	runs.storedVersions = storedVersions
	server.Register(TaskRunPath, webhook(runs))
	return nil
}

// webhook serves h as an admission webhook that answers a panic with an
// error rather than dropping the connection.
func webhook(h admission.Handler) *admission.Webhook {
	recoverPanic := true
	return &admission.Webhook{Handler: h, RecoverPanic: &recoverPanic}
}

// newTaskGuard is the Task webhook's guard, judging by rules.
func newTaskGuard(rules *hubRules) *guard[v1beta1.Task, v1alpha1.Task, *v1beta1.Task, *v1alpha1.Task] {
	return &guard[v1beta1.Task, v1alpha1.Task, *v1beta1.Task, *v1alpha1.Task]{
		kind: "Task", rules: rules, toHub: conversion.ConvertAlphaTaskToBeta, fromV1: conversion.DecodeV1Task,
		stashed: "spec.description, spec.params, spec.workspaces, spec.results and the steps' command, args, workingDir, env, envFrom, computeResources and onError",
	}
}

// newTaskRunGuard is the TaskRun webhook's guard, judging by rules.
func newTaskRunGuard(rules *hubRules) *guard[v1beta1.TaskRun, v1alpha1.TaskRun, *v1beta1.TaskRun, *v1alpha1.TaskRun] {
	return &guard[v1beta1.TaskRun, v1alpha1.TaskRun, *v1beta1.TaskRun, *v1alpha1.TaskRun]{
		kind: "TaskRun", rules: rules, toHub: conversion.ConvertAlphaTaskRunToBeta, fromV1: conversion.DecodeV1TaskRun,
		pin: taskRunPin, v1Pin: judgeV1Pin,
		stashed: "spec.params, spec.timeout, spec.status, spec.workspaces, spec.serviceAccountName, spec.podTemplate, spec.retries, spec.retryOn, " +
			"spec.ttlSecondsAfterFinished, status.conditions, status.steps, status.results and status.attempts",
	}
}
