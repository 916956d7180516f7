package v1

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestSemanticEqualityComparesDurations: equality.Semantic, which the
// controller's status write and the Task webhook use, compares a pinned
// spec's step timeouts by value, where it panicked on Duration's
// unexported text.
func TestSemanticEqualityComparesDurations(t *testing.T) {
	var tenMinutes Duration
	if err := tenMinutes.UnmarshalJSON([]byte(`"10m"`)); err != nil {
		t.Fatal(err)
	}
	status := func(d *Duration) TaskRunStatus {
		return TaskRunStatus{TaskSpec: &TaskSpec{Steps: []Step{{Name: "s", Timeout: d}}}}
	}
	for _, tc := range []struct {
		name string
		a, b *Duration
		want bool
	}{
		{"same text", &tenMinutes, &tenMinutes, true},
		{"same value, other text", &tenMinutes, NewDuration(10 * time.Minute), true},
		{"other value", &tenMinutes, NewDuration(time.Minute), false},
		{"one unset", &tenMinutes, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := equality.Semantic.DeepEqual(status(tc.a), status(tc.b)); got != tc.want {
				t.Errorf("Semantic.DeepEqual = %t, want %t", got, tc.want)
			}
		})
	}
}
