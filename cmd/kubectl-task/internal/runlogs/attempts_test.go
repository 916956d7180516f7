package runlogs_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// TestStreamFollowsEachAttempt follows runs that retry: each attempt's steps
// are read from that attempt's Pod, after a line that marks the attempt's
// start, and following goes on while the run does, between attempts too.
func TestStreamFollowsEachAttempt(t *testing.T) {
	const evicted = `Pod "r-pod" was evicted: The node was low on resource: memory.`
	// retrying is the run r, which may retry twice, on its attempt after the
	// failed attempts given (r-pod, r-pod-retry1, ...), in Pod podName.
	retrying := func(cond metav1.ConditionStatus, reason v1.TaskRunReason, podName string, failed int) *v1.TaskRun {
		r := run(cond)
		r.Spec.Retries = ptr.To[int32](2)
		r.Status.PodName = podName
		r.Status.Conditions[0].Reason = string(reason)
		for i := range failed {
			name := "r-pod"
			if i > 0 {
				name = fmt.Sprintf("r-pod-retry%d", i)
			}
			r.Status.Attempts = append(r.Status.Attempts, v1.Attempt{PodName: name, Reason: "PodFailed", Message: evicted})
		}
		return r
	}
	retryPod := func(name string, phase corev1.PodPhase, states ...corev1.ContainerState) *corev1.Pod {
		p := pod(phase, states...)
		p.Name = name
		return p
	}
	firstMark := "=== attempt 1 of 3\n"
	secondMark := "=== attempt 2 of 3, after attempt 1 failed (PodFailed): " + evicted + "\n"
	secondAttempt := "[prepare] log of r-pod-retry1/step-prepare follow=false\n[say] log of r-pod-retry1/step-say follow=false\n"

	tests := map[string]struct {
		objs   []client.Object
		follow bool
		// then, if set, is what happens once Stream has waited a while,
		// in order: the objects created, and the run updated. The
		// controller creates a Pod before the run's status names it.
		then    func() []client.Object
		want    string
		printed int
	}{
		"an attempt's Pod fails, then the run retries: each attempt in turn": {
			// The first attempt's Pod failed before its second step started,
			// and the run has not recorded it yet: the run goes on.
			objs:   []client.Object{task(), retrying(metav1.ConditionUnknown, v1.ReasonRunning, "r-pod", 0), pod(corev1.PodFailed, ended, waiting)},
			follow: true,
			then: func() []client.Object {
				return []client.Object{retryPod("r-pod-retry1", corev1.PodSucceeded, ended, ended), retrying(metav1.ConditionTrue, v1.ReasonSucceeded, "r-pod-retry1", 1)}
			},
			want:    firstMark + "[prepare] log of r-pod/step-prepare follow=false\n" + secondMark + secondAttempt,
			printed: 3,
		},
		"an attempt fails while a step waits to start: the step is not read from the next attempt's Pod": {
			objs:   []client.Object{task(), retrying(metav1.ConditionUnknown, v1.ReasonRunning, "r-pod", 0), pod(corev1.PodRunning, ended, waiting)},
			follow: true,
			then: func() []client.Object {
				return []client.Object{retryPod("r-pod-retry1", corev1.PodSucceeded, ended, ended), retrying(metav1.ConditionTrue, v1.ReasonSucceeded, "r-pod-retry1", 1)}
			},
			want:    firstMark + "[prepare] log of r-pod/step-prepare follow=false\n" + secondMark + secondAttempt,
			printed: 3,
		},
		"a run between attempts, its next Pod not created yet": {
			objs:   []client.Object{task(), retrying(metav1.ConditionUnknown, v1.ReasonRetrying, "", 1), pod(corev1.PodFailed, ended, waiting)},
			follow: true,
			then: func() []client.Object {
				return []client.Object{retryPod("r-pod-retry1", corev1.PodSucceeded, ended, ended), retrying(metav1.ConditionTrue, v1.ReasonSucceeded, "r-pod-retry1", 1)}
			},
			want:    secondMark + secondAttempt,
			printed: 2,
		},
		"without following, the current attempt alone": {
			objs: []client.Object{task(), retrying(metav1.ConditionTrue, v1.ReasonSucceeded, "r-pod-retry1", 1),
				pod(corev1.PodFailed, ended, waiting), retryPod("r-pod-retry1", corev1.PodSucceeded, ended, ended)},
			want:    secondMark + secondAttempt,
			printed: 2,
		},
		"the last attempt: done once its steps are read": {
			objs: []client.Object{task(), retrying(metav1.ConditionUnknown, v1.ReasonRunning, "r-pod-retry2", 2),
				retryPod("r-pod-retry2", corev1.PodSucceeded, ended, ended)},
			follow: true,
			want: "=== attempt 3 of 3, after attempt 2 failed (PodFailed): " + evicted + "\n" +
				"[prepare] log of r-pod-retry2/step-prepare follow=false\n[say] log of r-pod-retry2/step-say follow=false\n",
			printed: 2,
		},
		"a run that does not retry: no marks": {
			objs:    []client.Object{task(), run(metav1.ConditionTrue), pod(corev1.PodSucceeded, ended, ended)},
			follow:  true,
			want:    "[prepare] log of r-pod/step-prepare follow=false\n[say] log of r-pod/step-say follow=false\n",
			printed: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tc.objs...).Build()
			src := &runlogs.PodSource{Reader: c, Pods: namedLogs{kubefake.NewClientset().CoreV1()}, Namespace: ns, Run: "r", PollInterval: 10 * time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s := startStream(ctx, src, runlogs.Options{Follow: tc.follow})
			if tc.then != nil {
				s.expectRunning(t, "the run goes on")
				for _, obj := range tc.then() {
					if err := write(ctx, c, obj); err != nil {
						t.Fatalf("writing %T: %v", obj, err)
					}
				}
			}
			s.expect(t, tc.printed, tc.want)
		})
	}
}

// namedLogs serves "log of POD/CONTAINER follow=BOOL" for a container's
// log, so that a test sees which attempt's Pod each line came from.
type namedLogs struct{ corev1client.PodsGetter }

func (n namedLogs) Pods(namespace string) corev1client.PodInterface {
	return namedPodLogs{n.PodsGetter.Pods(namespace)}
}

type namedPodLogs struct{ corev1client.PodInterface }

func (p namedPodLogs) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	log := fmt.Sprintf("log of %s/%s follow=%t\n", name, opts.Container, opts.Follow)
	return (&fakerest.RESTClient{
		Client: fakerest.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(log))}, nil
		}),
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         corev1.SchemeGroupVersion,
		VersionedAPIPath:     "/api/v1",
	}).Request()
}
