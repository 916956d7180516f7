package eventtime_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/internal/eventtime"
)

func TestLastSeen(t *testing.T) {
	at := func(minutes int) time.Time { return time.Date(2026, 1, 1, 12, minutes, 0, 0, time.UTC) }
	tests := map[string]struct {
		event corev1.Event
		want  time.Time
	}{
		"core/v1, seen again": {corev1.Event{FirstTimestamp: metav1.NewTime(at(1)), LastTimestamp: metav1.NewTime(at(5)), Count: 4}, at(5)},
		"core/v1, only first": {corev1.Event{FirstTimestamp: metav1.NewTime(at(1))}, at(1)},
		"events.k8s.io, once": {corev1.Event{EventTime: metav1.NewMicroTime(at(2))}, at(2)},
		"events.k8s.io, a series": {corev1.Event{EventTime: metav1.NewMicroTime(at(2)),
			Series: &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(at(7))}}, at(7)},
		"no time but its creation": {corev1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(3))}}, at(3)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := eventtime.LastSeen(&tc.event); !got.Equal(tc.want) {
				t.Errorf("LastSeen() = %s, want %s", got, tc.want)
			}
		})
	}
}
