package runinfo

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestNewestFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	run := func(ns, name string, created time.Time, started *time.Time) *v1.TaskRun {
		w := wrappers.TaskRun(ns, name, "greet")
		if started != nil {
			w = w.Started(metav1.NewTime(*started))
		}
		r := w.Obj()
		r.CreationTimestamp = metav1.NewTime(created)
		return r
	}
	later := t0.Add(time.Minute)
	runs := []*v1.TaskRun{
		run("a", "started-early", t0, &t0),
		run("a", "greet-1", t0, nil),
		run("a", "greet-2", t0, nil),
		run("b", "greet-1", t0, nil),
		run("a", "created-late-not-started", later.Add(time.Second), nil),
		run("a", "started-late", t0, &later),
	}
	slices.SortStableFunc(runs, NewestFirst)
	var got []string
	for _, r := range runs {
		got = append(got, r.Namespace+"/"+r.Name)
	}
	// started-early started when the greet runs were created: the name decides.
	want := []string{"a/created-late-not-started", "a/started-late", "a/started-early", "a/greet-2", "a/greet-1", "b/greet-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newest first (-want +got):\n%s", diff)
	}
}
