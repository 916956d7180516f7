package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestEnvVarSource(t *testing.T) {
	tests := map[string]struct {
		env  corev1.EnvVar
		want string
	}{
		"a literal value, shown as it is": {
			env:  corev1.EnvVar{Name: "GOFLAGS", Value: "-mod=mod"},
			want: "value: -mod=mod",
		},
		"a param reference, shown before substitution": {
			env:  corev1.EnvVar{Name: "GREETING", Value: "$(params.greeting)"},
			want: "value: $(params.greeting)",
		},
		"an empty value, quoted so that it shows": {
			env:  corev1.EnvVar{Name: "EMPTY"},
			want: `value: ""`,
		},
		"a value over lines, quoted onto one": {
			env:  corev1.EnvVar{Name: "SCRIPT", Value: "set -e\nmake\t "},
			want: `value: "set -e\nmake\t "`,
		},
		"a Secret's key, never its value": {
			env:  corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
			want: "secretKeyRef: git.token",
		},
		"an optional ConfigMap key": {
			env: corev1.EnvVar{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode", Optional: ptr.To(true)}}},
			want: "configMapKeyRef: settings.mode (optional)",
		},
		"a field of the Pod": {
			env:  corev1.EnvVar{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			want: "fieldRef: spec.nodeName",
		},
		"a resource of a container": {
			env:  corev1.EnvVar{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "step-build", Resource: "limits.memory"}}},
			want: "resourceFieldRef: limits.memory of step-build",
		},
		"a key of an env file": {
			env:  corev1.EnvVar{Name: "REV", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "source", Path: "build.env", Key: "REV"}}},
			want: "fileKeyRef: source/build.env.REV",
		},
		"a source this plugin does not know": {
			env:  corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{}},
			want: "valueFrom: (a source this plugin does not know)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, envVarSource(tc.env)); diff != "" {
				t.Errorf("envVarSource (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvFromSource(t *testing.T) {
	tests := map[string]struct {
		from corev1.EnvFromSource
		want string
	}{
		"a ConfigMap": {
			from: corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}},
			want: "configMapRef: build-settings",
		},
		"an optional Secret": {
			from: corev1.EnvFromSource{Prefix: "APP_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Optional: ptr.To(true)}},
			want: "secretRef: creds (optional)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, envFromSource(tc.from)); diff != "" {
				t.Errorf("envFromSource (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodTemplateSummaries(t *testing.T) {
	affinity := map[string]struct {
		affinity corev1.Affinity
		want     string
	}{
		"node and anti-affinity": {
			affinity: corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}, PodAntiAffinity: &corev1.PodAntiAffinity{}},
			want:     "nodeAffinity, podAntiAffinity",
		},
		"pod affinity": {affinity: corev1.Affinity{PodAffinity: &corev1.PodAffinity{}}, want: "podAffinity"},
		"empty":        {want: "(empty)"},
	}
	for name, tc := range affinity {
		t.Run("affinity: "+name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, affinityKinds(&tc.affinity)); diff != "" {
				t.Errorf("affinityKinds (-want +got):\n%s", diff)
			}
		})
	}

	securityContexts := map[string]struct {
		sc   corev1.PodSecurityContext
		want string
	}{
		"who the steps run as": {
			sc: corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(3000)),
				FSGroup: ptr.To(int64(2000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			want: "runAsNonRoot=true, runAsUser=1000, runAsGroup=3000, fsGroup=2000, seccompProfile=RuntimeDefault",
		},
		"only settings the summary leaves out": {
			sc:   corev1.PodSecurityContext{SupplementalGroups: []int64{5}},
			want: "set (see the run's spec.podTemplate.securityContext)",
		},
	}
	for name, tc := range securityContexts {
		t.Run("security context: "+name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, securityContextSummary(&tc.sc)); diff != "" {
				t.Errorf("securityContextSummary (-want +got):\n%s", diff)
			}
		})
	}
}
