package runinfo_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func TestPodShape(t *testing.T) {
	const reason = `step "fetch" runs a command, not a script: its image may have no shell for the wait that chains steps`
	// pod is a Pod of steps with annotations; the last step is its
	// container, the others init containers.
	pod := func(annotations map[string]string, steps ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
		for i, s := range steps {
			c := corev1.Container{Name: runstate.StepContainer(s)}
			if i < len(steps)-1 {
				p.Spec.InitContainers = append(p.Spec.InitContainers, c)
			} else {
				p.Spec.Containers = append(p.Spec.Containers, c)
			}
		}
		return p
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"chained": {
			pod:  pod(map[string]string{runstate.AnnotationPodShape: runstate.PodShapeChained}, "fetch", "build"),
			want: "chained (every step a container that waits for the one before)",
		},
		"chained asked for, init containers, and why": {
			pod: pod(map[string]string{runstate.AnnotationPodShape: runstate.PodShapeInitContainers, runstate.AnnotationPodShapeReason: reason},
				"fetch", "build"),
			want: "init containers (not chained: " + reason + ")",
		},
		"no annotation: the default shape, or an earlier release's Pod": {
			pod:  pod(nil, "fetch", "build"),
			want: "init containers",
		},
		"init containers without a reason": {
			pod:  pod(map[string]string{runstate.AnnotationPodShape: runstate.PodShapeInitContainers}, "fetch", "build"),
			want: "init containers",
		},
		"one step, one container in either shape": {
			pod:  pod(nil, "build"),
			want: "one container (a run of one step)",
		},
		"a shape a later release built": {
			pod:  pod(map[string]string{runstate.AnnotationPodShape: "sidecars"}, "fetch", "build"),
			want: "sidecars (a shape this kubectl task does not know: a later release's)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runinfo.PodShape(tc.pod)); diff != "" {
				t.Errorf("PodShape (-want +got):\n%s", diff)
			}
		})
	}
}
