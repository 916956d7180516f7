//go:build e2e

package e2e

import (
	"testing"
)

// requestKind is one kind of request a run costs the API server, as
// apiserver_request_total counts it (the labels a request must carry), or,
// for the conversion reviews, as the manager's webhook server counts them.
type requestKind struct {
	name   string
	labels []map[string]string
}

// requestKinds are the requests the burst reports per run, for the
// controller and for its floor: what each run asks of the API server, whoever
// asks (the controller, the benchmark's client, the scheduler, kwok as the
// kubelet). Events of both APIs count under resource "events".
var requestKinds = []requestKind{
	{"taskrun-creates", []map[string]string{{"resource": "taskruns", "subresource": "", "verb": "POST"}}},
	{"pod-creates", []map[string]string{{"resource": "pods", "subresource": "", "verb": "POST"}}},
	{"taskrun-status-patches", []map[string]string{
		{"resource": "taskruns", "subresource": "status", "verb": "PATCH"},
		{"resource": "taskruns", "subresource": "status", "verb": "PUT"},
		{"resource": "taskruns", "subresource": "status", "verb": "APPLY"}}},
	{"event-creates", []map[string]string{
		{"resource": "events", "verb": "POST"},
		{"resource": "events", "verb": "PATCH"}}},
	{"taskrun-gets", []map[string]string{{"resource": "taskruns", "subresource": "", "verb": "GET"}}},
	{"pod-gets", []map[string]string{{"resource": "pods", "subresource": "", "verb": "GET"}}},
	{"namespace-gets", []map[string]string{{"resource": "namespaces", "subresource": "", "verb": "GET"}}},
	{"pod-status-patches", []map[string]string{
		{"resource": "pods", "subresource": "status", "verb": "PATCH"},
		{"resource": "pods", "subresource": "status", "verb": "PUT"}}},
	{"bindings", []map[string]string{{"resource": "pods", "subresource": "binding", "verb": "POST"}}},
}

// requestCounts is what the API server and the manager have counted so far.
type requestCounts struct{ api, manager metricFamilies }

// countRequests scrapes both now.
func countRequests(tb testing.TB, c *cluster, m *manager) requestCounts {
	tb.Helper()
	return requestCounts{api: apiServerMetrics(tb, c), manager: m.metrics(tb)}
}

// reportRequestsPerRun reports each request kind counted between before and
// after, per run, as "<prefix><kind>/run", and the manager's conversion
// reviews as "<prefix>conversion-reviews/run".
func reportRequestsPerRun(b *testing.B, before, after requestCounts, runs int, prefix string) {
	b.Helper()
	for _, kind := range requestKinds {
		var n float64
		for _, labels := range kind.labels {
			n += after.api.Sum("apiserver_request_total", labels) - before.api.Sum("apiserver_request_total", labels)
		}
		b.ReportMetric(n/float64(runs), prefix+kind.name+"/run")
	}
	b.ReportMetric((after.manager.conversions()-before.manager.conversions())/float64(runs), prefix+"conversion-reviews/run")
}
