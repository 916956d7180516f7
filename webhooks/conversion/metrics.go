package conversion

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// passthroughTotal counts the objects the handler passed through
// unconverted, by kind: each is an object in etcd that a typed decode
// refuses, which an operator should find (the log names it) and repair
// through v1beta1.
var passthroughTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "minitask_conversion_passthrough_total",
	Help: "Objects the conversion webhook passed through unconverted because they do not decode or convert, by kind.",
}, []string{"kind"})

func init() {
	metrics.Registry.MustRegister(passthroughTotal)
	// Export zeros, so that an alert on the rate has a series from the start.
	for _, kind := range []string{"Task", "TaskRun"} {
		passthroughTotal.WithLabelValues(kind)
	}
}
