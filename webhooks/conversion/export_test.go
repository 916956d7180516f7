package conversion

// What this package's tests share with the external test package
// (conversion_test), whose tests need the package webhooks, which imports
// this one.

// ReportLatencies is reportLatencies, for BenchmarkWriteLatency.
var ReportLatencies = reportLatencies
