package runlogs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	fakecorev1 "k8s.io/client-go/kubernetes/typed/core/v1/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/internal/runstate"
)

const ns = "demo"

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1.AddToScheme(s))
	return s
}

func task() *v1.Task {
	return &v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greet"},
		Spec: v1.TaskSpec{Steps: []v1.Step{{Name: "prepare", Image: "alpine"}, {Name: "say", Image: "alpine"}}}}
}

// run returns the TaskRun "r", finished if cond is not Unknown, with its Pod r-pod.
func run(cond metav1.ConditionStatus, steps ...v1.StepState) *v1.TaskRun {
	return &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"},
		Spec:       v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}},
		Status: v1.TaskRunStatus{PodName: "r-pod", Steps: steps,
			Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: cond, Reason: "Any"}}},
	}
}

// pod returns r-pod with its steps' containers in the states given, in order.
func pod(phase corev1.PodPhase, states ...corev1.ContainerState) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r-pod"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "step-prepare"}},
			Containers:     []corev1.Container{{Name: "step-say"}},
		},
		Status: corev1.PodStatus{Phase: phase},
	}
	for i, st := range states {
		cs := corev1.ContainerStatus{State: st}
		if i == 0 {
			cs.Name = "step-prepare"
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, cs)
		} else {
			cs.Name = "step-say"
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
		}
	}
	return p
}

// setPodStatus gives the Pod p names the status of p, as the kubelet would.
func setPodStatus(ctx context.Context, c client.Client, p *corev1.Pod) error {
	current := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
		return fmt.Errorf("getting the Pod: %w", err)
	}
	current.Status = p.Status
	if err := c.Status().Update(ctx, current); err != nil {
		return fmt.Errorf("updating the Pod: %w", err)
	}
	return nil
}

// longStep is a step name too long for its container name.
var longStep = strings.Repeat("s", 63)

// longNamedPod is r-pod whose second step has a name too long for its
// container, which the controller records in an annotation.
func longNamedPod(states ...corev1.ContainerState) *corev1.Pod {
	p := pod(corev1.PodRunning, states...)
	short := runstate.StepContainer(longStep)
	p.Spec.Containers[0].Name = short
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Name = short
	}
	names, _ := runstate.StepNamesAnnotation([]string{"prepare", longStep})
	p.Annotations = map[string]string{runstate.AnnotationStepNames: names}
	return p
}

var (
	waiting = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	started = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	ended   = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
)

// newSource returns a PodSource over objs whose Pod logs API answers
// "log of CONTAINER follow=BOOL".
func newSource(objs ...client.Object) (*runlogs.PodSource, client.Client) {
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...).Build()
	kube := kubefake.NewClientset()
	kube.PrependReactor("get", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "log" {
			return false, nil, nil
		}
		opts := action.(clienttesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		// As long either way, as a kubelet serves the same bytes whether
		// followed or not: a followed stream that ended is read again past
		// what it delivered.
		follow := "false"
		if opts.Follow {
			follow = "true "
		}
		return true, &runtime.Unknown{Raw: []byte("log of " + opts.Container + " follow=" + follow + "\n")}, nil
	})
	return &runlogs.PodSource{Reader: c, Pods: kube.CoreV1(), Namespace: ns, Run: "r", PollInterval: 10 * time.Millisecond}, c
}

func TestPodSourceSteps(t *testing.T) {
	tests := map[string]struct {
		objs []client.Object
		want []string
	}{
		"from the Pod": {
			objs: []client.Object{task(), run(metav1.ConditionUnknown), pod(corev1.PodPending)},
			want: []string{"prepare", "say"},
		},
		"from the Pod, a long step name from its annotation": {
			objs: []client.Object{task(), run(metav1.ConditionUnknown), longNamedPod()},
			want: []string{"prepare", longStep},
		},
		"from the status, the Pod gone": {
			objs: []client.Object{run(metav1.ConditionFalse, v1.StepState{Name: "a"}, v1.StepState{Name: "b"})},
			want: []string{"a", "b"},
		},
		"from the Task, before a Pod": {
			objs: []client.Object{task(), run(metav1.ConditionUnknown)},
			want: []string{"prepare", "say"},
		},
		"none while the Task does not exist": {
			objs: []client.Object{run(metav1.ConditionUnknown)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, _ := newSource(tc.objs...)
			got, err := src.Steps(context.Background(), false)
			if err != nil {
				t.Fatalf("Steps: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodSourceOpen(t *testing.T) {
	tests := map[string]struct {
		objs   []client.Object
		step   string
		follow bool
		// later, if set, replaces the Pod after a while, as the kubelet would.
		later *corev1.Pod
		// endsAfterOpen, if set, replaces the Pod once the log is open: a
		// followed stream ends with its container, and the Pod says so.
		endsAfterOpen *corev1.Pod
		want          string
		wantErr       error
	}{
		"a step that has run": {
			objs: []client.Object{run(metav1.ConditionUnknown), pod(corev1.PodRunning, ended, started)},
			step: "prepare",
			want: "log of step-prepare follow=false\n",
		},
		"a long-named step, from its shortened container": {
			objs: []client.Object{run(metav1.ConditionUnknown), longNamedPod(ended, started)},
			step: longStep,
			want: "log of " + runstate.StepContainer(longStep) + " follow=false\n",
		},
		"a step still running, followed": {
			objs:          []client.Object{run(metav1.ConditionUnknown), pod(corev1.PodRunning, ended, started)},
			step:          "say",
			follow:        true,
			endsAfterOpen: pod(corev1.PodRunning, ended, ended),
			want:          "log of step-say follow=true \n",
		},
		"a step not started, not followed": {
			objs:    []client.Object{run(metav1.ConditionUnknown), pod(corev1.PodPending, started, waiting)},
			step:    "say",
			wantErr: runlogs.ErrNotStarted,
		},
		"a step not started, followed until it starts": {
			objs:          []client.Object{run(metav1.ConditionUnknown), pod(corev1.PodPending, started, waiting)},
			step:          "say",
			follow:        true,
			later:         pod(corev1.PodRunning, ended, started),
			endsAfterOpen: pod(corev1.PodRunning, ended, ended),
			want:          "log of step-say follow=true \n",
		},
		"a chained step whose container waits for its turn, not followed": {
			objs:    []client.Object{run(metav1.ConditionUnknown), chainedPod(corev1.PodRunning, started, started, started)},
			step:    "say",
			wantErr: runlogs.ErrNotStarted,
		},
		"a chained step whose container waits for its turn, followed once its turn comes": {
			objs:          []client.Object{run(metav1.ConditionUnknown), chainedPod(corev1.PodRunning, started, started, started)},
			step:          "say",
			follow:        true,
			later:         chainedPod(corev1.PodRunning, ended, started, started),
			endsAfterOpen: chainedPod(corev1.PodRunning, ended, ended, started),
			want:          "log of step-say follow=true \n",
		},
		"a chained step skipped after a step before it failed, followed": {
			objs:    []client.Object{run(metav1.ConditionUnknown), chainedPod(corev1.PodRunning, ended, failed, skipped)},
			step:    "tidy",
			follow:  true,
			wantErr: runlogs.ErrNotStarted,
		},
		"a step the run ended without": {
			objs:    []client.Object{run(metav1.ConditionFalse), pod(corev1.PodFailed, ended, waiting)},
			step:    "say",
			follow:  true,
			wantErr: runlogs.ErrNotStarted,
		},
		"a run deleted since its steps were read": {
			step:    "say",
			follow:  true,
			wantErr: runlogs.ErrNotStarted,
		},
		"a run whose Pod is gone": {
			objs:    []client.Object{run(metav1.ConditionFalse)},
			step:    "prepare",
			follow:  true,
			wantErr: runlogs.ErrNotStarted,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, c := newSource(tc.objs...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			opened := make(chan struct{})
			if tc.later != nil {
				go func() {
					select {
					case <-opened:
						t.Error("Open returned before the step started")
					case <-time.After(100 * time.Millisecond):
					}
					if err := setPodStatus(ctx, c, tc.later); err != nil {
						t.Error(err)
					}
				}()
			}
			r, err := src.Open(ctx, tc.step, tc.follow)
			close(opened)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Open: error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			defer r.Close()
			if tc.endsAfterOpen != nil {
				if err := setPodStatus(ctx, c, tc.endsAfterOpen); err != nil {
					t.Fatal(err)
				}
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodSourceOpenWaitsForAnUnreachableKubelet: following, a log the API
// server cannot get from its kubelet (a 5xx: the kubelet restarting) is
// asked for again until it is served; not following, that is an error.
func TestPodSourceOpenWaitsForAnUnreachableKubelet(t *testing.T) {
	for _, follow := range []bool{true, false} {
		src, c := newSource(run(metav1.ConditionUnknown), pod(corev1.PodRunning, ended, started))
		refusals := 0
		src.Pods.(*fakecorev1.FakeCoreV1).PrependReactor("get", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if action.GetSubresource() != "log" || refusals == 2 {
				return false, nil, nil
			}
			refusals++
			return true, nil, apierrors.NewInternalError(errors.New("dial tcp 127.0.0.1:10250: connect: connection refused"))
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := src.Open(ctx, "say", follow)
		if !follow {
			if err == nil || refusals != 1 {
				t.Errorf("not following: Open returned %v after %d refusals, want the refusal as an error", err, refusals)
			}
			cancel()
			continue
		}
		if err != nil {
			cancel()
			t.Fatalf("following: Open: %v", err)
		}
		if err := setPodStatus(ctx, c, pod(corev1.PodRunning, ended, ended)); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		_ = r.Close()
		cancel()
		if err != nil || string(got) != "log of step-say follow=true \n" || refusals != 2 {
			t.Errorf("following: read %q (%v) after %d refusals, want the log after 2", got, err, refusals)
		}
	}
}
