package controllers

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/rundecision"
)

// This file gives a run's Pod the shape the manager asks for
// (--pod-shape): runpod.Build chooses, and falls back to init containers
// where the chained shape cannot keep its promises. One fact it needs is the
// API server's: whether it keeps a Pod's spec.resources (the
// PodLevelResources feature, beta and on since Kubernetes 1.34), which a
// chained Pod needs when more than one step requests a resource. An API
// server with the feature off drops the field without a word, and the
// steps' requests would add up; so the first such Pod is created with
// dryRun first, and what the API server returned says.

// podLevelResources remembers whether the API server keeps Pod-level
// resources, once a dry run has told.
type podLevelResources struct {
	mu          sync.Mutex
	known, kept bool
}

// keeps reports whether the API server keeps a Pod's
// spec.resources, creating the Pod that build makes with dryRun the first
// time. A dry run refused by the namespace's LimitRange says nothing, and
// the Pod is built chained: its creation meets the same refusal, and
// createPod builds it again with init containers, saying why. Any other
// failed dry run (a webhook with side effects refuses dry runs, say) is
// unknown, non-empty, saying so: that Pod gets init containers, and the next
// one asks again.
func (p *podLevelResources) keeps(ctx context.Context, c client.Client, build func() (*corev1.Pod, error)) (kept bool, unknown string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.kept, ""
	}
	pod, err := build()
	if err != nil {
		return false, "could not build the chained Pod: " + err.Error()
	}
	err = c.Create(ctx, pod, client.DryRunAll)
	switch {
	case rundecision.RefusedByContainerLimitRange(err):
		return true, ""
	case err != nil:
		log.FromContext(ctx).Info("could not tell whether the API server keeps Pod-level resources: this Pod gets init containers", "error", err.Error())
		return false, "could not tell whether the API server keeps Pod-level resources, which this Task's chained Pod needs: a dry run of it failed: " + err.Error()
	}
	p.known, p.kept = true, pod.Spec.Resources != nil
	log.FromContext(ctx).Info("asked the API server whether it keeps Pod-level resources", "kept", p.kept)
	return p.kept, ""
}
