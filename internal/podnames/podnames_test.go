package podnames

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestBoundedKeepsLongNamesApart(t *testing.T) {
	prefix := strings.Repeat("x", 80)
	if a, b := Bounded(prefix+"a", "-pod"), Bounded(prefix+"b", "-pod"); a == b {
		t.Errorf("two long names that share a prefix both became %q", a)
	}
}

func TestStepContainer(t *testing.T) {
	tests := map[string]struct {
		step string
		want string
	}{
		"short name":                    {"build", "step-build"},
		"longest name kept whole":       {strings.Repeat("s", 58), "step-" + strings.Repeat("s", 58)},
		"one character too long":        {strings.Repeat("s", 59), "step-" + strings.Repeat("s", 47) + "-" + hashOf(strings.Repeat("s", 59))},
		"longest step name":             {strings.Repeat("s", 63), "step-" + strings.Repeat("s", 47) + "-" + hashOf(strings.Repeat("s", 63))},
		"cut that would end in a dash":  {strings.Repeat("s", 46) + "-" + strings.Repeat("t", 16), "step-" + strings.Repeat("s", 46) + "-" + hashOf(strings.Repeat("s", 46)+"-"+strings.Repeat("t", 16))},
		"long names with a common head": {strings.Repeat("s", 62) + "u", "step-" + strings.Repeat("s", 47) + "-" + hashOf(strings.Repeat("s", 62)+"u")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := StepContainer(tc.step)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("StepContainer() mismatch (-want +got):\n%s", diff)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("StepContainer() = %q, not a valid container name: %v", got, errs)
			}
		})
	}
}

func TestStepNamesAnnotation(t *testing.T) {
	long := strings.Repeat("s", 59)
	tests := map[string]struct {
		steps      []string
		want       string
		wantNeeded bool
	}{
		"every name fits":   {steps: []string{"fetch", strings.Repeat("s", 58)}},
		"one name too long": {steps: []string{"fetch", long}, want: `["fetch","` + long + `"]`, wantNeeded: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, needed := StepNamesAnnotation(tc.steps)
			if got != tc.want || needed != tc.wantNeeded {
				t.Errorf("StepNamesAnnotation() = %q, %v, want %q, %v", got, needed, tc.want, tc.wantNeeded)
			}
		})
	}
}

func TestSteps(t *testing.T) {
	long := strings.Repeat("s", 63)
	pod := func(annotation string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{}
		if annotation != "" {
			p.Annotations = map[string]string{AnnotationStepNames: annotation}
		}
		for _, c := range containers[:len(containers)-1] {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c})
		}
		p.Spec.Containers = []corev1.Container{{Name: containers[len(containers)-1]}}
		return p
	}
	annotation, _ := StepNamesAnnotation([]string{"fetch", long})
	tests := map[string]struct {
		pod  *corev1.Pod
		want []Step
	}{
		"names from containers": {
			pod:  pod("", "step-fetch", "step-build"),
			want: []Step{{"fetch", "step-fetch"}, {"build", "step-build"}},
		},
		"names from the annotation": {
			pod:  pod(annotation, "step-fetch", StepContainer(long)),
			want: []Step{{"fetch", "step-fetch"}, {long, StepContainer(long)}},
		},
		"an earlier release's container names": {
			pod:  pod("", "compile"),
			want: []Step{{"compile", "compile"}},
		},
		"annotation that does not match the containers is ignored": {
			pod:  pod(`["fetch"]`, "step-fetch", "step-build"),
			want: []Step{{"fetch", "step-fetch"}, {"build", "step-build"}},
		},
		"malformed annotation is ignored": {
			pod:  pod(`{`, "step-fetch"),
			want: []Step{{"fetch", "step-fetch"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Steps(tc.pod)); diff != "" {
				t.Errorf("Steps() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func hashOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:hashLength]
}
