package cli

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// TestWaitForRun checks what waiting for a run sees of the run's changes,
// from the resourceVersion it was created at, through watches that the API
// server cuts off: the API server's part is scripted, for what envtest
// cannot be made to do (a resourceVersion too old to watch from).
func TestWaitForRun(t *testing.T) {
	// The run as created, at resourceVersion 1, and as it goes on.
	run := func(rv string, reason v1.TaskRunReason) *v1.TaskRun {
		r := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "greet-1", ResourceVersion: rv}}
		if reason == "" {
			return r
		}
		status := metav1.ConditionUnknown
		switch reason {
		case v1.ReasonSucceeded:
			status = metav1.ConditionTrue
		case v1.ReasonStepFailed:
			status = metav1.ConditionFalse
		}
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason)}}
		return r
	}
	event := func(typ watch.EventType, r *v1.TaskRun) watch.Event { return watch.Event{Type: typ, Object: r} }
	tooOld := watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("too old resource version: 1 (40)").ErrStatus}
	lost := "TaskRun greet-1 was deleted before its outcome could be seen (it was Running when last seen): if it finished, " +
		"its time to live after finishing (spec.ttlSecondsAfterFinished, or the manager's --default-ttl-after-finished) was short " +
		"enough for the controller to delete it at once; its Events may remain: kubectl get events -n demo --field-selector involvedObject.name=greet-1"

	tests := map[string]struct {
		// watches are what each watch delivers, in turn; a watch that ends
		// closes after its events, else it stays open.
		watches []scriptedWatch
		// watchErr, if set, is what every watch request gets instead.
		watchErr error
		// stored is the run as a GET reads it now; nil: it is gone.
		stored *v1.TaskRun
		// wantReason is the reason of the run returned, else wantErr.
		wantReason string
		wantErr    string
		// wantFrom are the resourceVersions the watches start at.
		wantFrom []string
	}{
		"finished, then deleted at once": {
			// A run whose TTL after finishing is 0.
			watches: []scriptedWatch{{events: []watch.Event{
				event(watch.Modified, run("2", v1.ReasonRunning)),
				event(watch.Modified, run("3", v1.ReasonSucceeded)),
				event(watch.Deleted, run("4", v1.ReasonSucceeded)),
			}}},
			wantReason: "Succeeded",
			wantFrom:   []string{"1"},
		},
		"failed": {
			watches:    []scriptedWatch{{events: []watch.Event{event(watch.Modified, run("2", v1.ReasonStepFailed))}}},
			wantReason: "StepFailed",
			wantFrom:   []string{"1"},
		},
		"deleted while it went on": {
			watches: []scriptedWatch{{events: []watch.Event{
				event(watch.Modified, run("2", v1.ReasonRunning)),
				event(watch.Deleted, run("3", v1.ReasonRunning)),
			}}},
			wantErr:  "TaskRun greet-1 was deleted while it was Running, before it finished: someone deleted it, or its namespace, and its outcome is lost",
			wantFrom: []string{"1"},
		},
		"a watch cut off goes on from the last change seen": {
			watches: []scriptedWatch{
				{events: []watch.Event{event(watch.Modified, run("2", v1.ReasonRunning))}, ends: true},
				{events: []watch.Event{event(watch.Modified, run("3", v1.ReasonSucceeded))}},
			},
			wantReason: "Succeeded",
			wantFrom:   []string{"1", "2"},
		},
		"too old to watch from, and finished meanwhile": {
			watches: []scriptedWatch{
				{events: []watch.Event{event(watch.Modified, run("2", v1.ReasonRunning))}, ends: true},
				{events: []watch.Event{tooOld}},
			},
			stored:     run("7", v1.ReasonSucceeded),
			wantReason: "Succeeded",
			wantFrom:   []string{"1", "2"},
		},
		"too old to watch from, and going on": {
			watches: []scriptedWatch{
				{events: []watch.Event{event(watch.Modified, run("2", v1.ReasonRunning))}, ends: true},
				{events: []watch.Event{tooOld}},
				{events: []watch.Event{event(watch.Modified, run("8", v1.ReasonSucceeded))}},
			},
			stored:     run("7", v1.ReasonRunning),
			wantReason: "Succeeded",
			wantFrom:   []string{"1", "2", "7"},
		},
		"too old to watch from, and gone": {
			watches: []scriptedWatch{
				{events: []watch.Event{event(watch.Modified, run("2", v1.ReasonRunning))}, ends: true},
				{events: []watch.Event{tooOld}},
			},
			wantErr:  lost,
			wantFrom: []string{"1", "2"},
		},
		"watching refused": {
			watchErr: apierrors.NewForbidden(schema.GroupResource{Group: "minitask.dev", Resource: "taskruns"}, "greet-1",
				errors.New(`User "dev" cannot watch resource "taskruns" in API group "minitask.dev" in the namespace "demo"`)),
			wantErr: `waiting for TaskRun greet-1 to finish: taskruns.minitask.dev "greet-1" is forbidden: ` +
				`User "dev" cannot watch resource "taskruns" in API group "minitask.dev" in the namespace "demo"`,
			wantFrom: []string{"1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // a watch cut off is resumed after a second
			b := fake.NewClientBuilder().WithScheme(newScheme())
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			watches := &scriptedWatches{WithWatch: b.Build(), watches: tc.watches, err: tc.watchErr}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			got, err := waitForRun(ctx, &Clients{Client: watches}, run("1", ""))
			gotReason, gotErr := "", ""
			if got != nil {
				gotReason = runstate.Succeeded(got).Reason
			}
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantReason, gotReason); diff != "" {
				t.Errorf("the run's reason (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("the error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFrom, watches.from()); diff != "" {
				t.Errorf("the resourceVersions watched from (-want +got):\n%s", diff)
			}
		})
	}
}

// scriptedWatch is what one watch delivers.
type scriptedWatch struct {
	events []watch.Event
	// ends closes the watch after its events, as the API server does.
	ends bool
}

// scriptedWatches is a client whose watches deliver scripted events, and
// whose GETs read a fake's objects.
type scriptedWatches struct {
	client.WithWatch
	watches []scriptedWatch
	err     error

	mu sync.Mutex
	// rvs are the resourceVersions the watches asked for.
	rvs []string
}

func (s *scriptedWatches) Watch(_ context.Context, _ client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	var o client.ListOptions
	o.ApplyOptions(opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rvs = append(s.rvs, o.Raw.ResourceVersion)
	if s.err != nil {
		return nil, s.err
	}
	if len(s.watches) == 0 {
		return watch.NewFake(), nil // nothing more happens
	}
	next := s.watches[0]
	s.watches = s.watches[1:]
	w := watch.NewFakeWithChanSize(len(next.events), false)
	for _, ev := range next.events {
		w.Action(ev.Type, ev.Object)
	}
	if next.ends {
		w.Stop()
	}
	return w, nil
}

func (s *scriptedWatches) from() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rvs
}
