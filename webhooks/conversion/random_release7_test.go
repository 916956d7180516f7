package conversion

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// Release 7's fields, which only v1 expresses (a step's securityContext,
// imagePullPolicy and timeout, a Task's stepTemplate and sidecars, a run's
// taskSpec, status.taskSpec and status.sidecars), for the v1 generators.

// release7TaskSpec fills spec's release 7 fields, or leaves them out.
func (g *objectGenerator) release7TaskSpec(spec *v1.TaskSpec) {
	if g.chance(0.4) {
		return // a Task release 6 runs
	}
	for i := range spec.Steps {
		s := &spec.Steps[i]
		if g.chance(0.5) {
			s.SecurityContext = g.securityContext()
		}
		if g.chance(0.5) {
			s.ImagePullPolicy = g.pullPolicy()
		}
		if g.chance(0.5) {
			s.Timeout = g.stepTimeout()
		}
	}
	if g.chance(0.5) {
		template := &v1.StepTemplate{ImagePullPolicy: pick(g, "", g.pullPolicy())}
		template.Env = list(g, 3, g.envVar, g.paramName)
		if g.chance(0.5) {
			template.EnvFrom = []corev1.EnvFromSource{g.envFromSource()}
		}
		if g.chance(0.5) {
			template.SecurityContext = g.securityContext()
		}
		spec.StepTemplate = template
	}
	taken := map[string]bool{}
	for _, s := range spec.Steps {
		taken[s.Name] = true
	}
	spec.Sidecars = list(g, 3, g.sidecar, func() string {
		for {
			if name := g.dnsLabel(); !taken[name] {
				return name
			}
		}
	})
}

func (g *objectGenerator) sidecar(name string) v1.Sidecar {
	s := v1.Sidecar{Name: name, Image: pick(g, "postgres:17", "redis", g.text()+":1")}
	if g.chance(0.5) {
		s.Script = g.text()
	} else {
		s.Command = g.stringList(3)
		s.Args = g.stringList(3)
	}
	if g.chance(0.3) {
		s.WorkingDir = "/" + g.dnsLabel()
	}
	s.Env = list(g, 3, g.envVar, g.paramName)
	if g.chance(0.3) {
		s.EnvFrom = []corev1.EnvFromSource{g.envFromSource()}
	}
	if g.chance(0.3) {
		s.ComputeResources = g.resources()
	}
	if g.chance(0.5) {
		s.SecurityContext = g.securityContext()
	}
	s.ImagePullPolicy = pick(g, "", g.pullPolicy())
	if g.chance(0.5) {
		s.Ports = []corev1.ContainerPort{{ContainerPort: 1 + g.r.Int32N(65535), Protocol: pick(g, "", corev1.ProtocolTCP, corev1.ProtocolUDP), Name: pick(g, "", "http")}}
	}
	if g.chance(0.5) {
		s.ReadinessProbe = g.probe()
	}
	if g.chance(0.3) {
		s.StartupProbe = g.probe()
	}
	return s
}

func (g *objectGenerator) probe() *corev1.Probe {
	p := &corev1.Probe{PeriodSeconds: g.r.Int32N(10), FailureThreshold: g.r.Int32N(5)}
	switch g.intn(3) {
	case 0:
		p.Exec = &corev1.ExecAction{Command: []string{"pg_isready", g.text()}}
	case 1:
		p.HTTPGet = &corev1.HTTPGetAction{Path: "/" + g.dnsLabel(), Port: pick(g, intstr.FromInt32(8080), intstr.FromString("http"))}
	default:
		p.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}
	}
	return p
}

func (g *objectGenerator) securityContext() *corev1.SecurityContext {
	if g.chance(0.2) {
		return &corev1.SecurityContext{}
	}
	c := &corev1.SecurityContext{
		RunAsUser:                g.optionalInt64(),
		RunAsNonRoot:             g.optionalBool(),
		Privileged:               g.optionalBool(),
		AllowPrivilegeEscalation: g.optionalBool(),
		ReadOnlyRootFilesystem:   g.optionalBool(),
	}
	if g.chance(0.5) {
		c.Capabilities = &corev1.Capabilities{
			Add:  pick(g, nil, []corev1.Capability{"SETFCAP"}, []corev1.Capability{"SETFCAP", "SYS_ADMIN"}),
			Drop: pick(g, nil, []corev1.Capability{"ALL"}),
		}
	}
	if g.chance(0.3) {
		c.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return c
}

func (g *objectGenerator) pullPolicy() v1.PullPolicy {
	return pick(g, v1.PullAlways, v1.PullIfNotPresent, v1.PullNever)
}

// stepTimeout is a duration, written as a user would or as Go does.
func (g *objectGenerator) stepTimeout() *v1.Duration {
	if g.chance(0.5) {
		var d v1.Duration
		if err := d.UnmarshalJSON([]byte(`"` + pick(g, "10m", "90s", "1h30m", "0s") + `"`)); err != nil {
			panic(err)
		}
		return &d
	}
	return v1.NewDuration(time.Duration(g.intn(7200)) * time.Second)
}

// release7TaskRun gives run an inline taskSpec instead of its taskRef, a
// pinned status.taskSpec and its sidecars' states, or some of them.
func (g *objectGenerator) release7TaskRun(run *v1.TaskRun) {
	if g.chance(0.4) {
		return // a run release 6 runs
	}
	if g.chance(0.5) {
		run.Spec.TaskRef = v1.TaskRef{}
		run.Spec.TaskSpec = &g.v1Task().Spec
	}
	if g.chance(0.5) {
		if run.Spec.TaskSpec != nil {
			run.Status.TaskSpec = run.Spec.TaskSpec.DeepCopy()
		} else {
			run.Status.TaskSpec = &g.v1Task().Spec
		}
	}
	run.Status.Sidecars = list(g, 3, func(name string) v1.SidecarState {
		return v1.SidecarState{
			Name:         name,
			State:        pick(g, "", v1.StepWaiting, v1.StepRunning, v1.StepTerminated),
			Ready:        g.optionalBool(),
			RestartCount: pick(g, nil, ptr.To[int32](0), ptr.To(g.r.Int32N(100))),
			ExitCode:     pick(g, nil, ptr.To[int32](0), ptr.To[int32](137)),
			Reason:       pick(g, "", "Completed", g.reason()),
			StartedAt:    g.optionalTime(),
			FinishedAt:   g.optionalTime(),
		}
	}, g.dnsLabel)
}
