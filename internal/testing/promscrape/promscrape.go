// Package promscrape reads Prometheus metrics in the text format, from the
// API server or any other endpoint, for the tests and benchmarks that count
// what a component did (requests, admission passes, reconciles).
package promscrape

import (
	"bytes"
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Families is one scrape of a Prometheus endpoint, by metric family name.
type Families map[string]*dto.MetricFamily

// Parse reads text, a scrape in Prometheus' text format.
func Parse(tb testing.TB, text []byte) Families {
	tb.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		tb.Fatalf("parsing metrics: %v", err)
	}
	return families
}

// APIServer scrapes the metrics of the API server cfg reaches, which count
// requests, admission passes and etcd requests by resource, whoever sent
// them.
func APIServer(tb testing.TB, cfg *rest.Config) Families {
	tb.Helper()
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		tb.Fatalf("scraping the API server's metrics: %v", err)
	}
	return Parse(tb, body)
}

// Sum adds up the counters and gauges of family whose labels include all of
// want, and the sample counts of its histograms (how many were observed).
func (f Families) Sum(family string, want map[string]string) float64 {
	var total float64
	for _, m := range f[family].GetMetric() {
		if hasLabels(m, want) {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// SampleSum adds up the sums of the observations of family's histograms and
// summaries whose labels include all of want: for a duration histogram, the
// seconds spent in what it times.
func (f Families) SampleSum(family string, want map[string]string) float64 {
	var total float64
	for _, m := range f[family].GetMetric() {
		if hasLabels(m, want) {
			total += m.GetHistogram().GetSampleSum() + m.GetSummary().GetSampleSum()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	labels := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}
