package runlogs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// TestStreamFollowsARunWaitingForItsTask follows a run whose Task does not
// exist yet: Stream must wait, as the run does, rather than end at once
// with nothing printed.
func TestStreamFollowsARunWaitingForItsTask(t *testing.T) {
	waitingRun := func() *v1beta1.TaskRun {
		r := run(metav1.ConditionUnknown)
		r.Status.PodName = ""
		r.Status.Conditions[0].Reason = string(v1beta1.ReasonWaitingForTask)
		return r
	}
	tests := map[string]struct {
		// then is what happens, in order, once Stream has waited a while.
		then    func(r *v1beta1.TaskRun) []client.Object
		want    string
		printed int
	}{
		"the Task appears, then the Pod: its steps are printed": {
			then: func(r *v1beta1.TaskRun) []client.Object {
				r.Status.PodName = "r-pod"
				r.Status.Conditions[0].Reason = string(v1beta1.ReasonRunning)
				return []client.Object{task(), pod(corev1.PodSucceeded, ended, ended), r}
			},
			want:    "[prepare] log of step-prepare follow=false\n[say] log of step-say follow=false\n",
			printed: 2,
		},
		"the run times out waiting: nothing to print": {
			then: func(r *v1beta1.TaskRun) []client.Object {
				r.Status.Conditions[0].Status = metav1.ConditionFalse
				r.Status.Conditions[0].Reason = string(v1beta1.ReasonTimeout)
				return []client.Object{r}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src, c := newSource(waitingRun())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type result struct {
				printed int
				err     error
			}
			var out strings.Builder
			done := make(chan result, 1)
			go func() {
				printed, err := runlogs.Stream(ctx, src, &out, runlogs.Options{Follow: true})
				done <- result{printed, err}
			}()
			select {
			case r := <-done:
				t.Fatalf("Stream returned (%d printed, error %v) while the run waits for its Task", r.printed, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			current := &v1beta1.TaskRun{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "r"}, current); err != nil {
				t.Fatal(err)
			}
			for _, obj := range tc.then(current) {
				var err error
				switch o := obj.(type) {
				case *v1beta1.TaskRun:
					err = c.Update(ctx, o) // the fake client has no status subresource for TaskRuns
				default:
					err = c.Create(ctx, o)
				}
				if err != nil {
					t.Fatalf("writing %T: %v", obj, err)
				}
			}
			r := <-done
			if r.err != nil || r.printed != tc.printed {
				t.Errorf("Stream: %d printed, error %v; want %d, no error", r.printed, r.err, tc.printed)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
