package testenv

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// CounterValue sums the counter name over the series of controller-runtime's
// metrics registry whose labels include labels: what the webhook manager of
// this process has counted (webhook requests, conversion passthroughs).
func CounterValue(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	total := 0.0
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
	series:
		for _, m := range family.GetMetric() {
			have := map[string]string{}
			for _, label := range m.GetLabel() {
				have[label.GetName()] = label.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
