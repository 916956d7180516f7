package runcache

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// TrimRun is the cache's transform of TaskRuns. It drops every run's
// managedFields, which the controller never reads and which can double an
// object's size. Of a finished run it also drops what only running it needs:
// the params, workspace bindings and Pod template of its spec, its steps'
// states and earlier attempts (up to 10, each with a message of up to 32
// KiB), and kubectl's copy of the last applied object. Finished runs are
// most of the cache (they stay until someone deletes them) and the controller
// reads no more of them than their Succeeded condition, and for their time
// to live their spec.ttlSecondsAfterFinished and completionTime: it never
// writes a finished run again, so no patch is ever computed from a trimmed
// one. What a later feature reads of finished runs is kept: this transform
// names what it drops, not what it keeps.
//
// The transform changes the object in place: the cache hands it each object
// freshly decoded from the API server, and nothing else holds it.
func TrimRun(obj any) (any, error) {
	run, ok := obj.(*v1.TaskRun)
	if !ok {
		return obj, nil
	}
	run.ManagedFields = nil
	if !runstate.Finished(run) {
		return run, nil
	}
	run.Spec.Params = nil
	run.Spec.Workspaces = nil
	run.Spec.PodTemplate = nil
	run.Status.Steps = nil
	run.Status.Attempts = nil
	delete(run.Annotations, corev1.LastAppliedConfigAnnotation)
	return run, nil
}
