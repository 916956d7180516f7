package conversion

// The benchmarks that need an API server live in the external test package,
// because internal/testenv imports this one; they share these inputs.
var (
	BenchmarkSizes  = benchmarkSizes
	BenchmarkInputs = benchmarkInputs
	LargeTask       = largeTask
	Review          = review
	NewTestScheme   = newTestScheme
)

type BenchmarkInput = benchmarkInput
