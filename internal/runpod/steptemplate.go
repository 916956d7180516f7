package runpod

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file gives every step the defaults of its Task's stepTemplate, before
// the step's container is built: a step's own field wins, env and envFrom
// merge, and the security context merges field by field. security.go merges
// the result, in turn, over what a restricted namespace requires.

// withTemplate returns step with template's defaults (nil: none) filled
// in. step is not changed; what the result shares with it or template is
// copied by containerForStep before it reaches the Pod.
func withTemplate(step v1.Step, template *v1.StepTemplate) v1.Step {
	if template == nil {
		return step
	}
	step.Env = mergeEnv(template.Env, step.Env)
	step.EnvFrom = mergeEnvFrom(template.EnvFrom, step.EnvFrom)
	step.SecurityContext = mergeSecurityContext(template.SecurityContext, step.SecurityContext)
	if step.ImagePullPolicy == "" {
		step.ImagePullPolicy = template.ImagePullPolicy
	}
	return step
}

// mergeEnv returns the template's variables that own does not name, in
// their order, then own's, in theirs: a step's variable replaces the
// template's of the same name, and the step's own keep their order, so a
// value that refers to an earlier variable ($(NAME)) still finds it, the
// template's included.
func mergeEnv(template, own []corev1.EnvVar) []corev1.EnvVar {
	if len(template) == 0 {
		return own
	}
	named := make(map[string]bool, len(own))
	for _, e := range own {
		named[e.Name] = true
	}
	merged := make([]corev1.EnvVar, 0, len(template)+len(own))
	for _, e := range template {
		if !named[e.Name] {
			merged = append(merged, e)
		}
	}
	return append(merged, own...)
}

// mergeEnvFrom returns the template's sources, then own's: the kubelet sets
// them in order, so a step's source wins over the template's for a key both
// hold. A template source that the step repeats exactly is dropped from the
// template's, so that it is read once, at the step's place.
func mergeEnvFrom(template, own []corev1.EnvFromSource) []corev1.EnvFromSource {
	if len(template) == 0 {
		return own
	}
	merged := make([]corev1.EnvFromSource, 0, len(template)+len(own))
	for _, t := range template {
		repeated := false
		for _, o := range own {
			if equality.Semantic.DeepEqual(t, o) {
				repeated = true
				break
			}
		}
		if !repeated {
			merged = append(merged, t)
		}
	}
	return append(merged, own...)
}

// mergeSecurityContext returns base with each field that over sets
// replaced by over's: field by field, a field's whole value (over's
// capabilities, say, are its own add and drop, not added to base's). nil
// when neither sets anything; base or over when the other is nil. Every
// field of a SecurityContext is a pointer, nil when unset
// (TestSecurityContextFieldsArePointers).
func mergeSecurityContext(base, over *corev1.SecurityContext) *corev1.SecurityContext {
	switch {
	case base == nil:
		return over
	case over == nil:
		return base
	}
	merged := *base
	m, o := reflect.ValueOf(&merged).Elem(), reflect.ValueOf(over).Elem()
	for i := range o.NumField() {
		if f := o.Field(i); !f.IsNil() {
			m.Field(i).Set(f)
		}
	}
	return &merged
}
