package runpod

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestWithTemplate(t *testing.T) {
	env := func(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }
	configMap := func(name string) corev1.EnvFromSource {
		return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
	}
	prefixed := configMap("settings")
	prefixed.Prefix = "APP_"
	step := func(change func(*v1.Step)) v1.Step {
		s := v1.Step{Name: "build", Image: "golang:1", Script: "go build"}
		if change != nil {
			change(&s)
		}
		return s
	}
	tests := map[string]struct {
		template *v1.StepTemplate
		step     v1.Step
		want     v1.Step
	}{
		"no template": {
			step: step(func(s *v1.Step) { s.Env = []corev1.EnvVar{env("A", "1")} }),
			want: step(func(s *v1.Step) { s.Env = []corev1.EnvVar{env("A", "1")} }),
		},
		"an empty template": {
			template: &v1.StepTemplate{},
			step:     step(nil),
			want:     step(nil),
		},
		"the template's alone": {
			template: &v1.StepTemplate{Env: []corev1.EnvVar{env("GOFLAGS", "-mod=mod")}, EnvFrom: []corev1.EnvFromSource{configMap("settings")},
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, ImagePullPolicy: v1.PullIfNotPresent},
			step: step(nil),
			want: step(func(s *v1.Step) {
				s.Env, s.EnvFrom = []corev1.EnvVar{env("GOFLAGS", "-mod=mod")}, []corev1.EnvFromSource{configMap("settings")}
				s.SecurityContext, s.ImagePullPolicy = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, v1.PullIfNotPresent
			}),
		},
		"env by name, the step's winning, the step's in its order after the template's others": {
			template: &v1.StepTemplate{Env: []corev1.EnvVar{env("A", "template"), env("B", "template"), env("C", "template")}},
			step:     step(func(s *v1.Step) { s.Env = []corev1.EnvVar{env("D", "$(A)"), env("B", "step")} }),
			want: step(func(s *v1.Step) {
				s.Env = []corev1.EnvVar{env("A", "template"), env("C", "template"), env("D", "$(A)"), env("B", "step")}
			}),
		},
		"a step's variable from a Secret replaces the template's value": {
			template: &v1.StepTemplate{Env: []corev1.EnvVar{env("TOKEN", "none")}},
			step: step(func(s *v1.Step) {
				s.Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}}}
			}),
			want: step(func(s *v1.Step) {
				s.Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}}}
			}),
		},
		"envFrom: the template's first, one the step repeats exactly dropped from them": {
			template: &v1.StepTemplate{EnvFrom: []corev1.EnvFromSource{configMap("shared"), configMap("settings"), configMap("tools")}},
			step:     step(func(s *v1.Step) { s.EnvFrom = []corev1.EnvFromSource{configMap("settings"), configMap("own")} }),
			want: step(func(s *v1.Step) {
				s.EnvFrom = []corev1.EnvFromSource{configMap("shared"), configMap("tools"), configMap("settings"), configMap("own")}
			}),
		},
		"envFrom: the same ConfigMap with another prefix is another source": {
			template: &v1.StepTemplate{EnvFrom: []corev1.EnvFromSource{configMap("settings")}},
			step:     step(func(s *v1.Step) { s.EnvFrom = []corev1.EnvFromSource{prefixed} }),
			want:     step(func(s *v1.Step) { s.EnvFrom = []corev1.EnvFromSource{configMap("settings"), prefixed} }),
		},
		"securityContext field by field, the step's set fields winning": {
			template: &v1.StepTemplate{SecurityContext: &corev1.SecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}},
			step: step(func(s *v1.Step) {
				s.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false),
					Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SETFCAP"}}}
			}),
			want: step(func(s *v1.Step) {
				s.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(false), RunAsUser: ptr.To[int64](0), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SETFCAP"}}}
			}),
		},
		"the step's own securityContext without a template's": {
			template: &v1.StepTemplate{Env: []corev1.EnvVar{env("A", "1")}},
			step:     step(func(s *v1.Step) { s.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)} }),
			want: step(func(s *v1.Step) {
				s.Env, s.SecurityContext = []corev1.EnvVar{env("A", "1")}, &corev1.SecurityContext{Privileged: ptr.To(true)}
			}),
		},
		"the step's pull policy wins": {
			template: &v1.StepTemplate{ImagePullPolicy: v1.PullIfNotPresent},
			step:     step(func(s *v1.Step) { s.ImagePullPolicy = v1.PullAlways }),
			want:     step(func(s *v1.Step) { s.ImagePullPolicy = v1.PullAlways }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, withTemplate(tc.step, tc.template)); diff != "" {
				t.Errorf("withTemplate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithTemplateChangesNeitherStepNorTemplate: the Task the controller
// read from its cache is never written through.
func TestWithTemplateChangesNeitherStepNorTemplate(t *testing.T) {
	task := wrappers.Task("ns", "t").Steps(v1.Step{Name: "a", Image: "alpine:3", Script: "true",
		Env:             []corev1.EnvVar{{Name: "A", Value: "step"}},
		SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1)},
	}).Obj()
	task.Spec.StepTemplate = &v1.StepTemplate{
		Env:             []corev1.EnvVar{{Name: "A", Value: "template"}, {Name: "B", Value: "$(params.p)"}},
		SecurityContext: &corev1.SecurityContext{RunAsGroup: ptr.To[int64](2), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	before := task.DeepCopy()
	pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, Inputs{Name: "run-pod", Restricted: true,
		Params: params.Values{Params: map[string]string{"p": "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.Containers[0].SecurityContext.Capabilities.Drop[0] = "changed"
	pod.Spec.Containers[0].Env[0].Value = "changed"
	if diff := cmp.Diff(before, task); diff != "" {
		t.Errorf("Build changed the Task (-before +after):\n%s", diff)
	}
}

// TestSecurityContextFieldsArePointers holds mergeSecurityContext to what
// it relies on: every field of a SecurityContext is nil when unset. A
// field of another kind, added by a later Kubernetes, would be merged
// wrong.
func TestSecurityContextFieldsArePointers(t *testing.T) {
	typ := reflect.TypeFor[corev1.SecurityContext]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Type.Kind() != reflect.Pointer {
			t.Errorf("corev1.SecurityContext.%s is a %s, not a pointer: mergeSecurityContext cannot tell it unset", f.Name, f.Type)
		}
	}
}

// TestRestrictedMerge: in a restricted namespace, a step's own settings win
// over the level's defaults field by field; the Pod's own seccompProfile
// still keeps the containers' unset.
func TestRestrictedMerge(t *testing.T) {
	restricted := func(change func(*corev1.SecurityContext)) *corev1.SecurityContext {
		sc := &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		if change != nil {
			change(sc)
		}
		return sc
	}
	tests := map[string]struct {
		step *corev1.SecurityContext
		pod  *corev1.PodSecurityContext
		want *corev1.SecurityContext
	}{
		"none of its own":   {want: restricted(nil)},
		"an empty one":      {step: &corev1.SecurityContext{}, want: restricted(nil)},
		"a read-only root":  {step: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}, want: restricted(func(sc *corev1.SecurityContext) { sc.ReadOnlyRootFilesystem = ptr.To(true) })},
		"its own user":      {step: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}, want: restricted(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr.To[int64](1000) })},
		"privilege allowed": {step: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}, want: restricted(func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation = ptr.To(true) })},
		"capabilities, its own add and drop": {
			step: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}},
			want: restricted(func(sc *corev1.SecurityContext) {
				sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}
			}),
		},
		"capabilities that add without dropping ALL are its own too": {
			step: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}},
			want: restricted(func(sc *corev1.SecurityContext) {
				sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}
			}),
		},
		"privileged, saying nothing of escalation: none set, which the API server would find invalid beside privileged": {
			step: &corev1.SecurityContext{Privileged: ptr.To(true)},
			want: restricted(func(sc *corev1.SecurityContext) { sc.Privileged, sc.AllowPrivilegeEscalation = ptr.To(true), nil }),
		},
		"CAP_SYS_ADMIN added, saying nothing of escalation: none set": {
			step: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}}},
			want: restricted(func(sc *corev1.SecurityContext) {
				sc.Capabilities, sc.AllowPrivilegeEscalation = &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}}, nil
			}),
		},
		"privileged, escalation forbidden by the step itself: as it asks": {
			step: &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)},
			want: restricted(func(sc *corev1.SecurityContext) { sc.Privileged = ptr.To(true) }),
		},
		"its own seccomp profile": {
			step: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
			want: restricted(func(sc *corev1.SecurityContext) {
				sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
			}),
		},
		"the Pod's seccomp profile": {
			step: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)},
			pod:  &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			want: restricted(func(sc *corev1.SecurityContext) { sc.SeccompProfile, sc.RunAsNonRoot = nil, ptr.To(true) }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &corev1.PodSpec{SecurityContext: tc.pod, Containers: []corev1.Container{{Name: "step-a", SecurityContext: tc.step.DeepCopy()}}}
			applyRestricted(spec)
			if diff := cmp.Diff(tc.want, spec.Containers[0].SecurityContext); diff != "" {
				t.Errorf("the container's securityContext (-want +got):\n%s", diff)
			}
		})
	}
}
