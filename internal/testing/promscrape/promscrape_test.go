package promscrape

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const scrape = `# TYPE requests_total counter
requests_total{verb="PATCH",resource="tasks"} 3
requests_total{verb="PATCH",resource="taskruns"} 4
requests_total{verb="GET",resource="tasks"} 5
# TYPE heap_bytes gauge
heap_bytes 1024
# TYPE step_seconds histogram
step_seconds_bucket{type="validate",le="1"} 6
step_seconds_bucket{type="validate",le="+Inf"} 7
step_seconds_sum{type="validate"} 0.5
step_seconds_count{type="validate"} 7
step_seconds_bucket{type="admit",le="+Inf"} 2
step_seconds_sum{type="admit"} 0.1
step_seconds_count{type="admit"} 2
`

func TestSumAddsWhatMatchesEveryLabel(t *testing.T) {
	families := Parse(t, []byte(scrape))
	tests := map[string]struct {
		family string
		labels map[string]string
		want   float64
	}{
		"counters, no labels":            {"requests_total", nil, 12},
		"counters, one label":            {"requests_total", map[string]string{"verb": "PATCH"}, 7},
		"counters, two labels":           {"requests_total", map[string]string{"verb": "PATCH", "resource": "tasks"}, 3},
		"a label no sample has":          {"requests_total", map[string]string{"verb": "DELETE"}, 0},
		"a gauge":                        {"heap_bytes", nil, 1024},
		"a histogram counts its samples": {"step_seconds", map[string]string{"type": "validate"}, 7},
		"a family not scraped":           {"missing_total", nil, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, families.Sum(tc.family, tc.labels)); diff != "" {
				t.Errorf("Sum(%s, %v) (-want +got):\n%s", tc.family, tc.labels, diff)
			}
		})
	}
}

func TestSampleSumAddsTheObservationsOfWhatMatches(t *testing.T) {
	families := Parse(t, []byte(scrape))
	tests := map[string]struct {
		family string
		labels map[string]string
		want   float64
	}{
		"every histogram":      {"step_seconds", nil, 0.6},
		"one label":            {"step_seconds", map[string]string{"type": "validate"}, 0.5},
		"a counter has none":   {"requests_total", nil, 0},
		"a family not scraped": {"missing_seconds", nil, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, families.SampleSum(tc.family, tc.labels)); diff != "" {
				t.Errorf("SampleSum(%s, %v) (-want +got):\n%s", tc.family, tc.labels, diff)
			}
		})
	}
}
