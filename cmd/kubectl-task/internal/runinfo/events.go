package runinfo

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/eventtime"
)

// MaxEvents is how many of a run's latest Events RunEvents returns.
const MaxEvents = 10

// RunEvents returns the latest Events about the run and its Pod, oldest
// first, at most MaxEvents.
func RunEvents(ctx context.Context, c client.Reader, run *v1.TaskRun) ([]corev1.Event, error) {
	subjects := map[string]string{"TaskRun": run.Name}
	if run.Status.PodName != "" {
		subjects["Pod"] = run.Status.PodName
	}
	var events []corev1.Event
	for kind, name := range subjects {
		var list corev1.EventList
		err := c.List(ctx, &list, client.InNamespace(run.Namespace),
			client.MatchingFields{"involvedObject.kind": kind, "involvedObject.name": name})
		if err != nil {
			return nil, err
		}
		for _, e := range list.Items {
			// A run or Pod of the same name, deleted and made again, is another object.
			if kind == "TaskRun" && e.InvolvedObject.UID != "" && e.InvolvedObject.UID != run.UID {
				continue
			}
			events = append(events, e)
		}
	}
	sort.SliceStable(events, func(i, j int) bool {
		ti, tj := eventtime.LastSeen(&events[i]), eventtime.LastSeen(&events[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return events[i].Name < events[j].Name
	})
	if len(events) > MaxEvents {
		events = events[len(events)-MaxEvents:]
	}
	return events, nil
}

// EventCount is how often an Event was seen.
func EventCount(e *corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return e.Count
}
