package conversion

import (
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The tests and benchmarks that need an API server live in the external
// test package, because internal/testenv imports this one; they share these
// inputs.
var (
	BenchmarkSizes  = benchmarkSizes
	BenchmarkInputs = benchmarkInputs
	LargeTask       = largeTask
	Review          = review
	NewTestScheme   = newTestScheme
	LowercaseTimes  = lowercaseTimes
	OversizedHubRun = oversizedHubRun
)

type BenchmarkInput = benchmarkInput

// RandomObjects makes the random valid objects of the round-trip tests.
type RandomObjects struct{ g *objectGenerator }

func NewRandomObjects(seed uint64) RandomObjects { return RandomObjects{newObjectGenerator(seed)} }

func (r RandomObjects) HubTask() *v1beta1.Task          { return r.g.hubTask() }
func (r RandomObjects) SpokeTask() *v1alpha1.Task       { return r.g.spokeTask() }
func (r RandomObjects) HubTaskRun() *v1beta1.TaskRun    { return r.g.hubTaskRun() }
func (r RandomObjects) SpokeTaskRun() *v1alpha1.TaskRun { return r.g.spokeTaskRun() }
func (r RandomObjects) Intn(n int) int                  { return r.g.intn(n) }
