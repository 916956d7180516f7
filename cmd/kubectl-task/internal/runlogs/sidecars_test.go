package runlogs_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// withSidecars is p with native sidecars db (in state db) and proxy (not
// reported yet) first among its init containers.
func withSidecars(p *corev1.Pod, db corev1.ContainerState) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = append([]corev1.Container{{Name: "sidecar-db", RestartPolicy: &always}, {Name: "sidecar-proxy", RestartPolicy: &always}},
		p.Spec.InitContainers...)
	p.Status.InitContainerStatuses = append([]corev1.ContainerStatus{{Name: "sidecar-db", State: db}}, p.Status.InitContainerStatuses...)
	return p
}

// TestStreamWithSidecars: the steps' logs, then each sidecar's that has
// started, prefixed "[sidecar NAME] "; --sidecar prints one, followed with
// -f; --step prints no sidecar's; a sidecar the run lacks is an error.
func TestStreamWithSidecars(t *testing.T) {
	finished := func() *corev1.Pod { return withSidecars(pod(corev1.PodSucceeded, ended, ended), ended) }
	tests := map[string]struct {
		pod     *corev1.Pod
		opts    runlogs.Options
		want    string
		printed int
		unknown bool
	}{
		"steps, then sidecars that started": {pod: finished(), printed: 3,
			want: "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n[sidecar db] log of sidecar-db follow=false\n"},
		"no step started: the sidecars' logs say why": {pod: withSidecars(pod(corev1.PodPending, waiting), started), printed: 1,
			want: "[sidecar db] log of sidecar-db follow=false\n"},
		"one sidecar":             {pod: finished(), opts: runlogs.Options{Sidecar: "db"}, printed: 1, want: "[sidecar db] log of sidecar-db follow=false\n"},
		"one sidecar, followed":   {pod: withSidecars(pod(corev1.PodRunning, ended, started), started), opts: runlogs.Options{Sidecar: "db", Follow: true}, printed: 1, want: "[sidecar db] log of sidecar-db follow=true \n"},
		"one step, no sidecar":    {pod: finished(), opts: runlogs.Options{Step: "say"}, printed: 1, want: "[say] log of step-say follow=false\n"},
		"a sidecar not started":   {pod: finished(), opts: runlogs.Options{Sidecar: "proxy"}},
		"a sidecar the run lacks": {pod: finished(), opts: runlogs.Options{Sidecar: "cache"}, unknown: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, c := newSource(task(), run(metav1.ConditionTrue), tc.pod)
			if tc.opts.Follow {
				// The sidecar ends a moment later, as the kubelet stops it.
				go func() {
					time.Sleep(100 * time.Millisecond)
					p := tc.pod.DeepCopy()
					p.Status.InitContainerStatuses[0].State = ended
					_ = setPodStatus(context.Background(), c, p)
				}()
			}
			var out bytes.Buffer
			printed, err := runlogs.Stream(context.Background(), src, &out, tc.opts)
			var unknown *runlogs.UnknownSidecarError
			if tc.unknown {
				if !errors.As(err, &unknown) || unknown.Error() != `the run has no sidecar "cache"; its sidecars are: db, proxy` {
					t.Fatalf("Stream() error = %v, want the run's sidecars named", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream(): %v", err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" || printed != tc.printed {
				t.Errorf("Stream() printed %d, want %d (-want +got):\n%s", printed, tc.printed, diff)
			}
		})
	}
}
