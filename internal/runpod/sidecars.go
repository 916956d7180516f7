package runpod

import (
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file builds a Task's sidecars: each a native sidecar of the kubelet's
// (an init container with restartPolicy Always), first among the Pod's init
// containers, in either Pod shape, as release 6 already reads them
// (runstate.Sidecars). The kubelet starts them in order before the steps,
// and starts the next init container (a step's, or the steps' containers)
// only once a sidecar has started: once its startupProbe has passed, if it
// has one. A sidecar's readinessProbe holds nothing back, so a sidecar that
// has only a readinessProbe gets a startupProbe made of it (startupProbeOf),
// so that step 1 starts only once every sidecar is ready (docs/sidecars.md).

// defaultProbePeriod is the kubelet's period for a probe that sets none.
const defaultProbePeriod = 10 * time.Second

// sidecarContainers returns the native sidecar containers of task's
// sidecars, in order, with references replaced in every text that may hold
// them, each charged to budget; each mounts mounts (the workspaces'). bound
// is how long a sidecar may take to become ready (startupBound).
func sidecarContainers(task *v1.Task, values params.Values, budget *params.Budget, mounts []corev1.VolumeMount, bound time.Duration) []corev1.Container {
	if len(task.Spec.Sidecars) == 0 {
		return nil
	}
	containers := make([]corev1.Container, len(task.Spec.Sidecars))
	for i, s := range task.Spec.Sidecars {
		c := corev1.Container{
			Name:          runstate.SidecarContainer(s.Name),
			Image:         budget.Substitute(s.Image, values),
			Command:       budget.ExpandList(s.Command, values),
			Args:          budget.ExpandList(s.Args, values),
			WorkingDir:    budget.Substitute(s.WorkingDir, values),
			Env:           substituteEnv(s.Env, values, budget),
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		}
		if s.Script != "" {
			c.Command = []string{"/bin/sh", "-c", budget.Substitute(s.Script, values)}
		}
		for _, from := range s.EnvFrom {
			c.EnvFrom = append(c.EnvFrom, *from.DeepCopy())
		}
		if s.ComputeResources != nil {
			c.Resources = *s.ComputeResources.DeepCopy()
		}
		for _, p := range s.Ports {
			c.Ports = append(c.Ports, *p.DeepCopy())
		}
		c.SecurityContext = s.SecurityContext.DeepCopy()
		c.ImagePullPolicy = corev1.PullPolicy(s.ImagePullPolicy)
		c.ReadinessProbe = s.ReadinessProbe.DeepCopy()
		c.StartupProbe = s.StartupProbe.DeepCopy()
		if c.StartupProbe == nil && c.ReadinessProbe != nil {
			c.StartupProbe = startupProbeOf(c.ReadinessProbe, bound)
		}
		c.VolumeMounts = slices.Clone(mounts)
		containers[i] = c
	}
	return containers
}

// startupBound is how long a sidecar may take to become ready before the
// controller ends the run: the run's timeouts.pending, else what is left of
// its timeout (deadline, the Pod's activeDeadlineSeconds), else no bound (0).
func startupBound(run *v1.TaskRun, deadline *int64) time.Duration {
	if p := run.Spec.Timeouts.Pending; p != nil && p.Duration > 0 {
		return p.Duration
	}
	if deadline != nil && *deadline > 0 {
		return time.Duration(*deadline) * time.Second
	}
	return 0
}

// startupProbeOf returns the startupProbe that holds the steps back until
// readiness, a sidecar's readinessProbe, passes once: the same check, delay,
// timeout and period, succeeding once (a startupProbe's success threshold
// must be 1), and failing only after bound has passed. A startupProbe that
// fails for good makes the kubelet kill and restart the sidecar, and the
// controller is the one to give up on it, at the pending timeout
// (SidecarFailed): so its failureThreshold is the number of periods that
// cover bound after the delay, plus one, and never fewer than the
// readinessProbe's own (3 by default). Without a bound, it never fails.
func startupProbeOf(readiness *corev1.Probe, bound time.Duration) *corev1.Probe {
	probe := &corev1.Probe{
		ProbeHandler:        *readiness.ProbeHandler.DeepCopy(),
		InitialDelaySeconds: readiness.InitialDelaySeconds,
		TimeoutSeconds:      readiness.TimeoutSeconds,
		PeriodSeconds:       readiness.PeriodSeconds,
		SuccessThreshold:    1,
		FailureThreshold:    math.MaxInt32,
	}
	if bound <= 0 {
		return probe
	}
	period := defaultProbePeriod
	if readiness.PeriodSeconds > 0 {
		period = time.Duration(readiness.PeriodSeconds) * time.Second
	}
	after := bound - time.Duration(readiness.InitialDelaySeconds)*time.Second
	periods := int64(max(after, 0)+period-1)/int64(period) + 1
	periods = max(periods, int64(max(readiness.FailureThreshold, 3)))
	probe.FailureThreshold = int32(min(periods, math.MaxInt32))
	return probe
}

// sidecarNames returns the names of task's sidecars, in order.
func sidecarNames(task *v1.Task) []string {
	names := make([]string, len(task.Spec.Sidecars))
	for i, s := range task.Spec.Sidecars {
		names[i] = s.Name
	}
	return names
}

// addSidecarRequests adds to requests, the chained Pod's Pod-level requests
// (the largest step's), what its sidecars request of each of those
// resources: they run beside every step, so their requests add to the
// steps', and the API server refuses a Pod whose containers request more
// than the Pod does.
func addSidecarRequests(requests corev1.ResourceList, task *v1.Task) {
	for _, s := range task.Spec.Sidecars {
		if s.ComputeResources == nil {
			continue
		}
		for name, q := range sidecarRequests(s) {
			total, ok := requests[name]
			if !ok {
				continue
			}
			total.Add(q)
			requests[name] = total
		}
	}
}

// sidecarRequests returns what sidecar's container requests once the API
// server has defaulted it: its requests, and for a resource it only limits,
// the limit.
func sidecarRequests(sidecar v1.Sidecar) corev1.ResourceList {
	requests := corev1.ResourceList{}
	for name, q := range sidecar.ComputeResources.Limits {
		requests[name] = q
	}
	for name, q := range sidecar.ComputeResources.Requests {
		requests[name] = q
	}
	return requests
}
