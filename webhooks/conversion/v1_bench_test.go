package conversion

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
)

// BenchmarkV1Conversion is BenchmarkConversionHandler's paired measure for
// the pairs v1, the hub since release 5, adds: each spoke to v1 (v1beta1 to
// v1 is what the API server's v1 watch cache asks on every write while
// v1beta1 is stored) and v1 to each spoke, on the same large Tasks and
// finished runs, against the codec's floor. The bound is the
// handler's: within 1.5x of the floor. Run it with
// go test -run='^$' -bench=V1Conversion -benchtime=0.5s ./webhooks/conversion/
// (it is not in make bench's conversion suite, whose names the report
// reads; docs/benchmarks.md gives its figures).
func BenchmarkV1Conversion(b *testing.B) {
	scheme := newTestScheme(b)
	convert, floor := newConversionHandler(b, scheme), &codecFloor{scheme: scheme}
	ctx := context.Background()
	v1Task := func(i int) runtime.Object {
		hub := &v1.Task{}
		if err := ConvertBetaTaskToHub(ctx, largeTask(i), hub); err != nil {
			b.Fatal(err)
		}
		return hub
	}
	v1Run := func(i int) runtime.Object {
		hub := &v1.TaskRun{}
		if err := ConvertBetaTaskRunToHub(ctx, finishedRun(i), hub); err != nil {
			b.Fatal(err)
		}
		return hub
	}
	alphaTask := func(i int) runtime.Object {
		dst := &v1alpha1.Task{}
		if err := ConvertBetaTaskToAlpha(ctx, largeTask(i), dst); err != nil {
			b.Fatal(err)
		}
		return dst
	}
	alphaRun := func(i int) runtime.Object {
		dst := &v1alpha1.TaskRun{}
		if err := ConvertBetaTaskRunToAlpha(ctx, finishedRun(i), dst); err != nil {
			b.Fatal(err)
		}
		return dst
	}
	pairs := []struct {
		kind, from, to string
		object         func(i int) runtime.Object
	}{
		{"Task", betaVersion, v1Version, func(i int) runtime.Object { return largeTask(i) }},
		{"TaskRun", betaVersion, v1Version, func(i int) runtime.Object { return finishedRun(i) }},
		{"Task", alphaVersion, v1Version, alphaTask},
		{"TaskRun", alphaVersion, v1Version, alphaRun},
		{"Task", v1Version, betaVersion, v1Task},
		{"TaskRun", v1Version, betaVersion, v1Run},
		{"Task", v1Version, alphaVersion, v1Task},
		{"TaskRun", v1Version, alphaVersion, v1Run},
	}
	for _, pair := range pairs {
		for _, n := range []int{1, 100, 1500} {
			body := review(b, scheme, pair.to, repeat(n, pair.object)...)
			name := fmt.Sprintf("kind=%s/from=%s/to=%s/objects=%d", pair.kind,
				strings.TrimPrefix(pair.from, "minitask.dev/"), strings.TrimPrefix(pair.to, "minitask.dev/"), n)
			b.Run(name, func(b *testing.B) { benchmarkPaired(b, convert, floor, body) })
		}
	}
}
