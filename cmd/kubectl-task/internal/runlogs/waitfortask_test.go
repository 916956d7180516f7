package runlogs_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// TestStreamFollowsARunWaitingForItsTask follows a run whose Task does not
// exist yet: Stream must wait, as the run does, rather than end at once
// with nothing printed.
func TestStreamFollowsARunWaitingForItsTask(t *testing.T) {
	waitingRun := func() *v1.TaskRun {
		r := run(metav1.ConditionUnknown)
		r.Status.PodName = ""
		r.Status.Conditions[0].Reason = string(v1.ReasonWaitingForTask)
		return r
	}
	tests := map[string]struct {
		// then is what happens, in order, once Stream has waited a while.
		then    func(r *v1.TaskRun) []client.Object
		want    string
		printed int
	}{
		"the Task appears, then the Pod: its steps are printed": {
			then: func(r *v1.TaskRun) []client.Object {
				r.Status.PodName = "r-pod"
				r.Status.Conditions[0].Reason = string(v1.ReasonRunning)
				return []client.Object{task(), pod(corev1.PodSucceeded, ended, ended), r}
			},
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"the run times out waiting: nothing to print": {
			then: func(r *v1.TaskRun) []client.Object {
				r.Status.Conditions[0].Status = metav1.ConditionFalse
				r.Status.Conditions[0].Reason = string(v1.ReasonTimeout)
				return []client.Object{r}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, c := newSource(waitingRun())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s := startStream(ctx, src, runlogs.Options{Follow: true})
			s.expectRunning(t, "the run waits for its Task")
			current := &v1.TaskRun{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "r"}, current); err != nil {
				t.Fatal(err)
			}
			for _, obj := range tc.then(current) {
				if err := write(ctx, c, obj); err != nil {
					t.Fatalf("writing %T: %v", obj, err)
				}
			}
			s.expect(t, tc.printed, tc.want)
		})
	}
}
