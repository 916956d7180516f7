package runlogs_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// onNode returns p bound to node "n".
func onNode(p *corev1.Pod) *corev1.Pod {
	p.Spec.NodeName = "n"
	return p
}

// node returns the Node "n", its Ready condition status, and taints.
func node(status corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))}}}}
}

// TestLogsGoneWithTheirNode checks that a step's log that its node or its
// Pod took with it is reported as gone, with the reason, in the step's place,
// and not as an error; and that a log that cannot be read on a node that is
// ready is still an error.
func TestLogsGoneWithTheirNode(t *testing.T) {
	// What the API server answers for the log of a Pod whose kubelet it
	// cannot reach, and of one whose node is gone.
	unreachable := apierrors.NewInternalError(errors.New(`Get "https://10.0.0.7:10250/containerLogs/demo/r-pod/step-prepare": dial tcp 10.0.0.7:10250: connect: no route to host`))
	nodeGone := apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "n")
	startedStep := v1.StepState{Name: "prepare", State: v1.StepRunning, StartedAt: &metav1.Time{Time: time.Now()}}
	tests := map[string]struct {
		objs []client.Object
		// logErr is what the logs API answers; nodesForbidden, that the
		// user may not read Nodes.
		logErr         error
		nodesForbidden bool
		want           string
		wantPrinted    int
		wantErr        bool
	}{
		"the node deleted": {
			objs:   []client.Object{run(metav1.ConditionFalse), onNode(pod(corev1.PodRunning, started, waiting))},
			logErr: nodeGone, wantPrinted: 1,
			want: `[prepare] (log gone: Pod "r-pod" is on node "n", and the node was deleted)` + "\n",
		},
		"the node not ready": {
			objs:   []client.Object{run(metav1.ConditionFalse), onNode(pod(corev1.PodRunning, ended, started)), node(corev1.ConditionUnknown)},
			logErr: unreachable, wantPrinted: 1,
			want: `[prepare] (log gone: Pod "r-pod" is on node "n", and the node is not ready (Ready is Unknown since 2026-01-01T12:00:00Z: NodeStatusUnknown))` + "\n",
		},
		"the node shut down": {
			objs: []client.Object{run(metav1.ConditionFalse), onNode(pod(corev1.PodRunning, ended, started)),
				node(corev1.ConditionUnknown, corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute})},
			logErr: unreachable, wantPrinted: 1,
			want: `[prepare] (log gone: Pod "r-pod" is on node "n", and the node is tainted node.kubernetes.io/out-of-service)` + "\n",
		},
		"Nodes not readable: the logs API's NotFound": {
			objs:   []client.Object{run(metav1.ConditionFalse), onNode(pod(corev1.PodRunning, started, waiting))},
			logErr: nodeGone, nodesForbidden: true, wantPrinted: 1,
			want: `[prepare] (log gone: Pod "r-pod" or its node "n" no longer exists: nodes "n" not found)` + "\n",
		},
		"Nodes not readable, another error: an error": {
			objs:   []client.Object{run(metav1.ConditionFalse), onNode(pod(corev1.PodRunning, started, waiting))},
			logErr: unreachable, nodesForbidden: true, wantErr: true,
		},
		"the node ready: an error": {
			objs:   []client.Object{run(metav1.ConditionUnknown), onNode(pod(corev1.PodRunning, started, waiting)), node(corev1.ConditionTrue)},
			logErr: unreachable, wantErr: true,
		},
		"the Pod gone after its step started": {
			objs:        []client.Object{run(metav1.ConditionFalse, startedStep, v1.StepState{Name: "say", State: v1.StepWaiting})},
			wantPrinted: 1,
			want:        `[prepare] (log gone: Pod "r-pod" no longer exists)` + "\n",
		},
		"the Pod gone before a step started: nothing to show": {
			objs: []client.Object{run(metav1.ConditionFalse, v1.StepState{Name: "prepare", State: v1.StepWaiting})},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(append(tc.objs, task())...)
			if tc.nodesForbidden {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.Node); ok {
						return apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, key.Name, errors.New("no RBAC"))
					}
					return c.Get(ctx, key, obj, opts...)
				}})
			}
			kube := kubefake.NewClientset()
			kube.PrependReactor("get", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() != "log" {
					return false, nil, nil
				}
				return true, nil, tc.logErr
			})
			src := &runlogs.PodSource{Reader: b.Build(), Pods: kube.CoreV1(), Namespace: ns, Run: "r", PollInterval: 10 * time.Millisecond}
			var out bytes.Buffer
			printed, err := runlogs.Stream(context.Background(), src, &out, runlogs.Options{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Stream: error %v, want one: %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if printed != tc.wantPrinted {
				t.Errorf("Stream printed %d steps, want %d", printed, tc.wantPrinted)
			}
		})
	}
}
