package conversion

import (
	"context"
	"testing"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// FuzzRoundTrip drives the random object generators and the stash with
// fuzzed input: from the seed, a random hub Task and TaskRun (every field
// release 3 added among them) convert to v1alpha1 and back unchanged on the
// wire; and a v1alpha1 Task carrying stash as its conversion annotation,
// whatever its bytes, converts to v1beta1 without error, to a Task that
// itself round trips unchanged. Run it longer with
// go test ./webhooks/conversion -run XXX -fuzz FuzzRoundTrip -fuzztime 60s.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(roundTripSeed), []byte(nil))
	f.Add(uint64(1), []byte(`{"v1beta1":{"spec":{"steps":[{"name":"build","env":[{"name":"A","value":"1"}]}]}}}`))
	f.Add(uint64(2), []byte(`{"v1beta1":{"spec":{"steps":[{"name":"build","command":["go"]},{"name":"build","args":["x"]}],"workspaces":[{"name":"w","readOnly":false}]}}}`))
	f.Add(uint64(3), []byte(`{"v1beta1":{"spec":{"steps":[{"name":"build","computeResources":{"limits":{"cpu":"0.5"}}}]}}}`))
	f.Add(uint64(4), []byte(`{"v1beta1":{"spec":{"steps":"build"}}}`))
	f.Add(uint64(5), []byte(`{"v1beta1":{"spec":{"steps":[{"name":"build","envFrom":[{}],"computeResources":{}}]}}}`))
	f.Add(uint64(6), []byte(`{"v1beta1":{"spec":{"results":[{"name":"digest"}],"steps":[{"name":"test","onError":"continue"}]}}}`))
	f.Add(uint64(7), []byte(`{"v1beta1":{"spec":{"results":[{"name":"digest"},{"name":"digest","description":""}],"steps":[{"name":"build","onError":"sometimes"}]}}}`))
	f.Add(uint64(8), []byte(`{"v1beta1":{"spec":{"results":{"name":"digest"}}}}`))

	f.Fuzz(func(t *testing.T, seed uint64, stash []byte) {
		ctx := context.Background()
		g := newObjectGenerator(seed)

		task := g.hubTask()
		checkHubRoundTrip(t, ctx, task, ConvertBetaTaskToAlpha, ConvertAlphaTaskToBeta)
		run := g.hubTaskRun()
		checkHubRoundTrip(t, ctx, run, ConvertBetaTaskRunToAlpha, ConvertAlphaTaskRunToBeta)

		spoke := &v1alpha1.Task{ObjectMeta: g.meta(), Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{
			{Name: "build", Image: "golang:1.26"}, {Name: "test", Image: "golang:1.26", Script: "go test ./..."}}}}
		if spoke.Annotations == nil {
			spoke.Annotations = map[string]string{}
		}
		spoke.Annotations[AnnotationConversionData] = string(stash)
		hub := &v1beta1.Task{}
		if err := ConvertAlphaTaskToBeta(ctx, spoke, hub); err != nil {
			t.Fatalf("converting a v1alpha1 Task with stash %q: %v", stash, err)
		}
		if _, ok := hub.Annotations[AnnotationConversionData]; ok {
			t.Fatalf("the v1beta1 Task carries the conversion annotation")
		}
		checkHubRoundTrip(t, ctx, throughJSON(t, hub), ConvertBetaTaskToAlpha, ConvertAlphaTaskToBeta)
	})
}

// checkHubRoundTrip converts hub to the spoke, through JSON, and back, and
// fails t unless the result is hub on the wire.
func checkHubRoundTrip[H, S any, PH deepCopier[H], PS deepCopier[S]](
	t *testing.T, ctx context.Context, hub PH,
	there func(context.Context, PH, PS) error, back func(context.Context, PS, PH) error,
) {
	t.Helper()
	spoke := PS(new(S))
	if err := there(ctx, hub, spoke); err != nil {
		t.Fatalf("converting %T there: %v", hub, err)
	}
	result := PH(new(H))
	if err := back(ctx, throughJSON(t, spoke), result); err != nil {
		t.Fatalf("converting %T back: %v", hub, err)
	}
	if !sameOnTheWire(t, hub, result) {
		t.Fatalf("round trip lost something (-original +result):\n%s\nmiddle: %s", wireDiff(t, hub, result), mustJSON(t, spoke))
	}
}
