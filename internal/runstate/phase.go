package runstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
)

// This file is the one place where a v1alpha1 phase and the Succeeded
// condition (v1's, and v1beta1's, the same) meet: conversion and the docs' table tests read a run's reasons
// and their phases from it.

// Reason is a reason of the Succeeded condition, with the status it comes with.
type Reason struct {
	Status metav1.ConditionStatus
	Reason v1.TaskRunReason
}

// Reasons returns every reason that the API defines for the Succeeded
// condition, with its status, in the order of docs/lifecycle.md's table (and
// of API.md's, which lists release 3's reasons after release 2's): the run
// goes on while the status is Unknown, and is finished once it is True or
// False.
func Reasons() []Reason {
	return []Reason{
		{metav1.ConditionUnknown, v1.ReasonPending},
		{metav1.ConditionUnknown, v1.ReasonWaitingForTask},
		{metav1.ConditionUnknown, v1.ReasonRunning},
		{metav1.ConditionTrue, v1.ReasonSucceeded},
		{metav1.ConditionFalse, v1.ReasonStepFailed},
		{metav1.ConditionFalse, v1.ReasonTimeout},
		{metav1.ConditionFalse, v1.ReasonCancelled},
		{metav1.ConditionFalse, v1.ReasonInvalidParams},
		{metav1.ConditionFalse, v1.ReasonPodFailed},
		{metav1.ConditionUnknown, v1.ReasonRetrying},
		{metav1.ConditionFalse, v1.ReasonResultsTooLarge},
		{metav1.ConditionFalse, v1.ReasonImagePullFailed},
		{metav1.ConditionFalse, v1.ReasonPodConfigFailed},
		{metav1.ConditionFalse, v1.ReasonPendingTimeout},
		{metav1.ConditionFalse, v1.ReasonStepTimedOut},
		{metav1.ConditionFalse, v1.ReasonSidecarFailed},
		{metav1.ConditionFalse, v1.ReasonFailed},
	}
}

// PhaseFromCondition returns the v1alpha1 phase that a TaskRun's Succeeded
// condition (nil when the run has none) stands for.
func PhaseFromCondition(c *metav1.Condition) v1alpha1.TaskRunPhase {
	if c == nil {
		return v1alpha1.TaskRunPhaseNone
	}
	switch c.Status {
	case metav1.ConditionTrue:
		return v1alpha1.TaskRunPhaseSucceeded
	case metav1.ConditionFalse:
		return v1alpha1.TaskRunPhaseFailed
	case metav1.ConditionUnknown:
		// Every Unknown reason but Running (Pending, WaitingForTask, Retrying,
		// ...) means no step runs yet, which v1alpha1 calls Pending: between
		// two attempts no Pod runs a step.
		if c.Reason == string(v1.ReasonRunning) {
			return v1alpha1.TaskRunPhaseRunning
		}
		return v1alpha1.TaskRunPhasePending
	default:
		// A status the API does not allow says nothing about the run.
		return v1alpha1.TaskRunPhaseNone
	}
}

// ConditionFromPhase returns the Succeeded condition that a v1alpha1 phase
// stands for, with the given lastTransitionTime, or nil for the empty phase
// (and for a phase outside the enum, which no condition can express).
func ConditionFromPhase(phase v1alpha1.TaskRunPhase, lastTransition metav1.Time) *metav1.Condition {
	var status metav1.ConditionStatus
	var reason v1.TaskRunReason
	switch phase {
	case v1alpha1.TaskRunPhasePending:
		status, reason = metav1.ConditionUnknown, v1.ReasonPending
	case v1alpha1.TaskRunPhaseRunning:
		status, reason = metav1.ConditionUnknown, v1.ReasonRunning
	case v1alpha1.TaskRunPhaseSucceeded:
		status, reason = metav1.ConditionTrue, v1.ReasonSucceeded
	case v1alpha1.TaskRunPhaseFailed:
		status, reason = metav1.ConditionFalse, v1.ReasonFailed
	default:
		return nil
	}
	return &metav1.Condition{
		Type:               v1.ConditionSucceeded,
		Status:             status,
		Reason:             string(reason),
		LastTransitionTime: lastTransition,
	}
}
