package runpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// stepSettingsGoldenCases are the Task shapes of release 7's step settings
// (a stepTemplate, a step's securityContext and imagePullPolicy), in both
// Pod shapes, whose Pods are pinned in testdata.
func stepSettingsGoldenCases() map[string]goldenCase {
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t") }
	configMap := func(name string) corev1.EnvFromSource {
		return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
	}
	// templated's steps take every default of its stepTemplate, and each
	// overrides some: the test step its env's GOFLAGS and a ConfigMap the
	// template also gives, the push step its user and its pull policy.
	templated := wrappers.Task("ns", "t").ParamDefault("mode", "mod").Steps(
		v1.Step{Name: "build", Image: "golang:1", Script: "go build ./..."},
		v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...",
			Env:     []corev1.EnvVar{{Name: "CGO_ENABLED", Value: "0"}, {Name: "GOFLAGS", Value: "-mod=vendor"}},
			EnvFrom: []corev1.EnvFromSource{configMap("proxy"), configMap("test")}},
		v1.Step{Name: "push", Image: "alpine:3", Script: "true", ImagePullPolicy: v1.PullAlways,
			SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false)}},
	).Obj()
	templated.Spec.StepTemplate = &v1.StepTemplate{
		Env:             []corev1.EnvVar{{Name: "GOFLAGS", Value: "-mod=$(params.mode)"}, {Name: "GOCACHE", Value: "/tmp/cache"}},
		EnvFrom:         []corev1.EnvFromSource{configMap("proxy")},
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true)},
		ImagePullPolicy: v1.PullIfNotPresent,
	}
	// secured's steps ask for their own settings: in a restricted
	// namespace, they win over its defaults field by field.
	secured := wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "fetch", Image: "alpine/git:2", Script: "git clone https://example.com/app.git"},
		v1.Step{Name: "serve", Image: "nginx:1", Script: "nginx -t",
			SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{
				Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}},
		v1.Step{Name: "build", Image: "golang:1", Script: "go build ./...",
			SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1001), ReadOnlyRootFilesystem: ptr.To(true)}},
	).Obj()
	secured.Spec.StepTemplate = &v1.StepTemplate{SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}}
	// privileged's step asks for what no restricted namespace admits;
	// elsewhere its container gets it exactly, and no more.
	privileged := wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "fetch", Image: "alpine:3", Script: "true"},
		v1.Step{Name: "build", Image: "quay.io/buildah/stable", Script: "buildah bud .",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SETFCAP"}}}},
	).Obj()
	pulls := wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "always", Image: "alpine:3", Script: "true", ImagePullPolicy: v1.PullAlways},
		v1.Step{Name: "never", Image: "tool:local", Script: "true", ImagePullPolicy: v1.PullNever},
		v1.Step{Name: "default", Image: "alpine:3", Script: "true"},
	).Obj()
	return map[string]goldenCase{
		"step-template":            {task: templated, run: run().Param("mode", "readonly").Obj()},
		"chained-step-template":    {task: templated, run: run().Param("mode", "readonly").Obj(), chained: true},
		"step-template-restricted": {task: templated, run: run().Obj(), restricted: true},
		"step-security":            {task: privileged, run: run().Obj()},
		"chained-step-security":    {task: privileged, run: run().Obj(), chained: true},
		"step-security-restricted": {task: secured, run: run().Obj(), restricted: true},
		// The API server would find a privileged container that may not
		// gain privileges invalid: the level's default is left out, and
		// Pod Security refuses the Pod, naming the step.
		"step-security-privileged-restricted": {task: privileged, run: run().Obj(), restricted: true},
		"chained-step-security-restricted":    {task: secured, run: run().Obj(), restricted: true, chained: true},
		"pull-policy":                         {task: pulls, run: run().Obj()},
		"chained-pull-policy":                 {task: pulls, run: run().Obj(), chained: true},
	}
}
