package runpod

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// sidecarGoldenCases are the Task shapes with sidecars, in both Pod shapes,
// whose Pods are pinned in testdata.
func sidecarGoldenCases() map[string]goldenCase {
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t") }
	pendingRun := func() *v1.TaskRun {
		r := run().Obj()
		r.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
		return r
	}
	// services has a database with only a readinessProbe (it gets a
	// startupProbe of it), a proxy with its own startupProbe, and a script
	// sidecar without a probe; the steps use them on localhost.
	services := wrappers.Task("ns", "t").ParamDefault("pg", "17").Workspace("src").Sidecars(
		v1.Sidecar{Name: "db", Image: "postgres:$(params.pg)",
			Env:              []corev1.EnvVar{{Name: "POSTGRES_PASSWORD", Value: "test"}},
			Ports:            []corev1.ContainerPort{{ContainerPort: 5432}},
			ReadinessProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready"}}}, PeriodSeconds: 1},
			ComputeResources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
		},
		v1.Sidecar{Name: "proxy", Image: "envoy:1", Args: []string{"-c", "/etc/envoy.yaml"},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(9901)}}},
			StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9901)}}, FailureThreshold: 30},
		},
		v1.Sidecar{Name: "files", Image: "busybox:1", Script: "httpd -f -p 8080 -h $(workspaces.src.path)", WorkingDir: "/tmp",
			ImagePullPolicy: v1.PullIfNotPresent, SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}},
	).Steps(
		v1.Step{Name: "migrate", Image: "migrate:4", Script: "migrate up",
			ComputeResources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}},
		v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...",
			ComputeResources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
	).Obj()
	// one has a sidecar beside a single step, a Pod the same in both
	// shapes; no pending timeout, so the startupProbe is bounded by the
	// run's timeout.
	one := wrappers.Task("ns", "t").Sidecars(
		v1.Sidecar{Name: "redis", Image: "redis:7",
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"redis-cli", "ping"}}},
				InitialDelaySeconds: 2, PeriodSeconds: 5}},
	).Step("check", "redis:7", "redis-cli -h localhost ping").Obj()
	return map[string]goldenCase{
		"sidecars":                    {task: services, run: pendingRun()},
		"chained-sidecars":            {task: services, run: pendingRun(), chained: true},
		"sidecars-restricted":         {task: services, run: pendingRun(), restricted: true},
		"chained-sidecars-restricted": {task: services, run: pendingRun(), restricted: true, chained: true},
		"sidecar-one-step":            {task: one, run: run().Obj(), deadline: ptr.To[int64](3600)},
	}
}
