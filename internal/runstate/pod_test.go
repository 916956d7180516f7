package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestPodName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := map[string]struct {
		run  string
		want string
	}{
		"short name":                 {"build", "build-pod"},
		"name that just fits":        {strings.Repeat("a", 59), strings.Repeat("a", 59) + "-pod"},
		"long name":                  {long, strings.Repeat("a", 48) + "-" + hashOf(long) + "-pod"},
		"cut that would end in dash": {strings.Repeat("a", 47) + "-" + long, strings.Repeat("a", 47) + "-" + hashOf(strings.Repeat("a", 47)+"-"+long) + "-pod"},
		"cut that would end in dot":  {strings.Repeat("a", 46) + ".." + long, strings.Repeat("a", 46) + "-" + hashOf(strings.Repeat("a", 46)+".."+long) + "-pod"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := PodName(runNamed(tc.run))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodName() mismatch (-want +got):\n%s", diff)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || len(got) > MaxLength {
				t.Errorf("PodName() = %q (%d characters), not a valid Pod name: %v", got, len(got), errs)
			}
		})
	}
}

func TestLongPodNamesKeptApart(t *testing.T) {
	prefix := strings.Repeat("x", 80)
	if a, b := PodName(runNamed(prefix+"a")), PodName(runNamed(prefix+"b")); a == b {
		t.Errorf("two long names that share a prefix both became %q", a)
	}
}

func TestTaskRunLabelValue(t *testing.T) {
	for _, name := range []string{"run", strings.Repeat("r", 63), strings.Repeat("r", 64), strings.Repeat("r.", 120) + "r"} {
		got := TaskRunLabelValue(runNamed(name))
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("TaskRunLabelValue(%d characters) = %q, not a label value: %v", len(name), got, errs)
		}
		if len(name) <= MaxLength && got != name {
			t.Errorf("TaskRunLabelValue(%q) = %q, want the name itself", name, got)
		}
	}
}

func TestIsManaged(t *testing.T) {
	run := runNamed("run")
	tests := map[string]struct {
		labels map[string]string
		want   bool
	}{
		"the run's Pod labels":         {PodLabels(run), true},
		"no labels":                    {nil, false},
		"managed by something else":    {map[string]string{LabelManagedBy: "helm", LabelTaskRun: "run"}, false},
		"run label without managed-by": {map[string]string{LabelTaskRun: "run"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if got := IsManaged(pod); got != tc.want {
				t.Errorf("IsManaged() = %t, want %t", got, tc.want)
			}
		})
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
		"release 7's sidecars before init container steps are no steps": {
			pod:  withSidecars(pod("", "step-fetch", "step-build"), "sidecar-db", "sidecar-proxy"),
			want: []Step{{"fetch", "step-fetch"}, {"build", "step-build"}},
		},
		"release 7's sidecars before chained steps are no steps": {
			pod: withSidecars(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationPodShape: PodShapeChained}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "step-fetch"}, {Name: "step-build"}}},
			}, "sidecar-db"),
			want: []Step{{"fetch", "step-fetch"}, {"build", "step-build"}},
		},
		"the annotation names the steps only, with sidecars": {
			pod:  withSidecars(pod(annotation, "step-fetch", StepContainer(long)), "sidecar-db"),
			want: []Step{{"fetch", "step-fetch"}, {long, StepContainer(long)}},
		},
		"a sidecar is told by its restartPolicy, whatever its name": {
			pod:  withSidecars(pod("", "step-fetch", "step-build"), "proxy"),
			want: []Step{{"fetch", "step-fetch"}, {"build", "step-build"}},
		},
		"an init container named like a sidecar but not restartable is a step": {
			pod:  pod("", "sidecar-db", "step-build"),
			want: []Step{{"sidecar-db", "sidecar-db"}, {"build", "step-build"}},
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

func TestNativeSidecars(t *testing.T) {
	always, never := corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicy("Never")
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "sidecar-db", RestartPolicy: &always},
			{Name: "other", RestartPolicy: &always},
			{Name: "sidecar-old"},
			{Name: "step-a", RestartPolicy: &never},
		},
		Containers: []corev1.Container{{Name: "step-b", RestartPolicy: &always}},
	}}
	if diff := cmp.Diff([]string{"sidecar-db", "other"}, NativeSidecars(pod)); diff != "" {
		t.Errorf("NativeSidecars() mismatch (-want +got):\n%s", diff)
	}
}

// withSidecars is pod with native sidecars named names put first among its
// init containers, as release 7 builds them.
func withSidecars(pod *corev1.Pod, names ...string) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	var sidecars []corev1.Container
	for _, name := range names {
		sidecars = append(sidecars, corev1.Container{Name: name, RestartPolicy: &always})
	}
	pod.Spec.InitContainers = append(sidecars, pod.Spec.InitContainers...)
	return pod
}

// runNamed returns a TaskRun with only a name.
func runNamed(name string) *v1.TaskRun {
	return &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// hashOf is the hash that a long name carries: the first hex digits of its SHA-256.
func hashOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:hashLength]
}

func TestAttemptPodName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := map[string]struct {
		run     string
		attempt int
		want    string
	}{
		"first attempt is PodName":  {"build", 0, "build-pod"},
		"second attempt":            {"build", 1, "build-pod-retry1"},
		"eleventh attempt":          {"build", 10, "build-pod-retry10"},
		"name that just fits":       {strings.Repeat("a", 51), 10, strings.Repeat("a", 51) + "-pod-retry10"},
		"long name":                 {long, 3, strings.Repeat("a", 41) + "-" + hashOf(long) + "-pod-retry3"},
		"long name, first attempt":  {long, 0, strings.Repeat("a", 48) + "-" + hashOf(long) + "-pod"},
		"long name, tenth retry":    {long, 10, strings.Repeat("a", 40) + "-" + hashOf(long) + "-pod-retry10"},
		"cut that would end in dot": {strings.Repeat("a", 40) + "." + long, 10, strings.Repeat("a", 40) + "-" + hashOf(strings.Repeat("a", 40)+"."+long) + "-pod-retry10"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := AttemptPodName(runNamed(tc.run), tc.attempt)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AttemptPodName() mismatch (-want +got):\n%s", diff)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || len(got) > MaxLength {
				t.Errorf("AttemptPodName() = %q (%d characters), not a valid Pod name: %v", got, len(got), errs)
			}
		})
	}
}

func TestAttemptPodNamesDiffer(t *testing.T) {
	run := runNamed(strings.Repeat("r", 253))
	seen := map[string]int{}
	for attempt := 0; attempt <= 10; attempt++ {
		name := AttemptPodName(run, attempt)
		if earlier, ok := seen[name]; ok {
			t.Errorf("attempts %d and %d both get Pod %q", earlier, attempt, name)
		}
		seen[name] = attempt
	}
}

func TestSidecars(t *testing.T) {
	long := strings.Repeat("s", 63)
	pod := withSidecars(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "step-a"}}}},
		"sidecar-db", SidecarContainer(long), "proxy")
	if got := SidecarContainer(long); len(got) != MaxLength {
		t.Errorf("SidecarContainer(long) = %q, %d characters, want %d", got, len(got), MaxLength)
	}
	if diff := cmp.Diff([]Step{{"db", "sidecar-db"}, {strings.TrimPrefix(SidecarContainer(long), SidecarContainerPrefix), SidecarContainer(long)}, {"proxy", "proxy"}},
		Sidecars(pod)); diff != "" {
		t.Errorf("Sidecars() without the annotation mismatch (-want +got):\n%s", diff)
	}
	annotation, needed := SidecarNamesAnnotation([]string{"db", long, "proxy"})
	if !needed {
		t.Fatal("SidecarNamesAnnotation() = false, want the names of a Pod with a long sidecar name")
	}
	if _, needed := SidecarNamesAnnotation([]string{"db", "proxy"}); needed {
		t.Error("SidecarNamesAnnotation() = true for short names")
	}
	pod.Annotations = map[string]string{AnnotationSidecarNames: annotation}
	if diff := cmp.Diff([]Step{{"db", "sidecar-db"}, {long, SidecarContainer(long)}, {"proxy", "proxy"}}, Sidecars(pod)); diff != "" {
		t.Errorf("Sidecars() with the annotation mismatch (-want +got):\n%s", diff)
	}
}
