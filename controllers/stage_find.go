package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is the first stage of a reconcile: it reads the current
// attempt's Pod, and what that Pod's node makes of it.

// findPod finds the Pod of the run's current attempt (s.PodName), if its
// status claims it or the run controls it. The Pods of earlier attempts are
// never looked at: they have ended, and are kept only for their logs.
//
// A run that never started reads it from the cache alone (unless podReads
// marks it): it has no Pod but one a reconcile created and crashed before
// recording, which the cache holds unless it has ended, and which createPod's
// create then finds. That saves each new run a GET from the API server.
func (r *TaskRunReconciler) findPod(ctx context.Context, s *runScope) error {
	s.ForgetPod()
	live := s.Claimed || s.Run.Status.StartTime != nil || r.podReads.marked(client.ObjectKeyFromObject(s.Run))
	key := client.ObjectKey{Namespace: s.Run.Namespace, Name: s.PodName}
	pod := &corev1.Pod{}
	found, err := r.getFresh(ctx, key, pod, live)
	if err != nil {
		return fmt.Errorf("getting Pod %s: %w", key, err)
	}
	if !found {
		return nil
	}
	if !s.Claimed && !metav1.IsControlledBy(pod, s.Run) {
		s.OtherPod = pod
		return nil
	}
	if !runstate.IsManaged(pod) {
		if err := r.adoptPod(ctx, s.Run, pod); err != nil {
			return err
		}
	}
	s.Pod = pod
	return r.readNode(ctx, s)
}

// readNode judges the node of the run's Pod, if its node has a say
// (runpod.JudgedByNode), into s.Node (docs/lifecycle.md, "Node faults"). A
// Pod's status is written by its kubelet: a node that is down, or cut off,
// leaves its Pods Running for ever. A Node the cache lacks is looked up on
// the API server before it is taken for deleted, as deleted ends a run or
// starts another attempt: a node that has just registered may not have
// reached the cache yet.
func (r *TaskRunReconciler) readNode(ctx context.Context, s *runScope) error {
	name, judged := runpod.JudgedByNode(s.Pod)
	if !judged {
		return nil
	}
	node := &corev1.Node{}
	found, err := r.getFresh(ctx, client.ObjectKey{Name: name}, node, true)
	if err != nil {
		return fmt.Errorf("getting Node %s: %w", name, err)
	}
	if !found {
		node = nil
	}
	v := nodefault.Judge(nodefault.Read(name, node), s.Pod.DeletionTimestamp != nil, s.Now, r.NodeLostTimeout)
	s.NodeJudged(v)
	if v.Lost() || v.NotReady {
		log.FromContext(ctx).V(1).Info("the run's Pod is on a node that is not ready or lost", "pod", s.Pod.Name, "node", name,
			"fault", v.Fault, "fenced", v.Fenced, "why", v.Why)
	}
	return nil
}
