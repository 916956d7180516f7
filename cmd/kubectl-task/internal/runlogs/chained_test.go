package runlogs_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// A chained Pod's steps' containers all run from the Pod's start, each
// waiting for its turn: these tests write the statuses a kubelet would, and
// check that a step's log is read only once its turn has come.

var (
	// failed is a step's container that ran its script, which failed.
	failed = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		Message: `{"exitCode":1,"results":{}}`}}
	// skipped is a chained step's container whose turn was "skip": it ran
	// nothing.
	skipped = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", Message: runstate.SkippedMessage}}
	// let is a step's container whose script failed, which onError:
	// continue let pass: the container exits 0, and hands over.
	let = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", Message: `{"exitCode":3,"results":{}}`}}
	// killed is a step's container stopped (the run's timeout, say).
	killed = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
)

// chainedPod returns r-pod built chained: the steps prepare, say and tidy,
// each a container, in the states given, in order.
func chainedPod(phase corev1.PodPhase, states ...corev1.ContainerState) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r-pod",
			Annotations: map[string]string{runstate.AnnotationPodShape: runstate.PodShapeChained}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "step-prepare"}, {Name: "step-say"}, {Name: "step-tidy"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	for i, st := range states {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: p.Spec.Containers[i].Name, State: st})
	}
	return p
}

func TestStreamReadsAChainedPodStepByStep(t *testing.T) {
	all := "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n[tidy] log of step-tidy follow=false\n"
	tests := map[string]struct {
		pod     *corev1.Pod
		step    string
		want    string
		printed int
	}{
		"the first step runs, the others wait for their turn": {
			pod:     chainedPod(corev1.PodRunning, started, started, started),
			want:    "[prepare] log of step-prepare follow=false\n",
			printed: 1,
		},
		"the second step runs": {
			pod:     chainedPod(corev1.PodRunning, ended, started, started),
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"every step passed": {
			pod:     chainedPod(corev1.PodSucceeded, ended, ended, ended),
			want:    all,
			printed: 3,
		},
		"the second step failed: the third, skipped, never ran": {
			pod:     chainedPod(corev1.PodRunning, ended, failed, skipped),
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"the first step failed, and onError: continue let the second run": {
			pod:     chainedPod(corev1.PodRunning, let, started, started),
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"stopped in the second step, the third killed waiting": {
			pod:     chainedPod(corev1.PodFailed, ended, killed, killed),
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"one step whose turn has not come": {
			pod:  chainedPod(corev1.PodRunning, ended, started, started),
			step: "tidy",
		},
		"one step whose turn has come": {
			pod:     chainedPod(corev1.PodRunning, ended, started, started),
			step:    "say",
			want:    "[say] log of step-say follow=false\n",
			printed: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, _ := newSource(task(), run(metav1.ConditionUnknown), tc.pod)
			s := startStream(context.Background(), src, runlogs.Options{Step: tc.step})
			s.expect(t, tc.printed, tc.want)
		})
	}
}

// TestStreamFollowsAChainedPod follows a chained Pod as its steps take their
// turns: each step's log once its turn has come, until its container ends,
// and no further than the step that failed.
func TestStreamFollowsAChainedPod(t *testing.T) {
	tests := map[string]struct {
		// then are the Pod's statuses, in order, each written once
		// Stream has waited a while.
		then    []*corev1.Pod
		want    string
		printed int
	}{
		"every step passes": {
			then: []*corev1.Pod{
				chainedPod(corev1.PodRunning, ended, started, started),
				chainedPod(corev1.PodRunning, ended, ended, started),
				chainedPod(corev1.PodSucceeded, ended, ended, ended),
			},
			want:    "[prepare] log of step-prepare follow=true \n[say] log of step-say follow=true \n[tidy] log of step-tidy follow=true \n",
			printed: 3,
		},
		"the second step fails, while the run has not ended yet": {
			then: []*corev1.Pod{
				chainedPod(corev1.PodRunning, ended, started, started),
				chainedPod(corev1.PodRunning, ended, failed, skipped),
			},
			want:    "[prepare] log of step-prepare follow=true \n[say] log of step-say follow=true \n",
			printed: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, c := newSource(task(), run(metav1.ConditionUnknown), chainedPod(corev1.PodRunning, started, started, started))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s := startStream(ctx, src, runlogs.Options{Follow: true})
			for _, p := range tc.then {
				s.expectRunning(t, "a step runs")
				if err := setPodStatus(ctx, c, p); err != nil {
					t.Fatal(err)
				}
			}
			s.expect(t, tc.printed, tc.want)
		})
	}
}
