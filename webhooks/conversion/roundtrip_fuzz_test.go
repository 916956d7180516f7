package conversion

import (
	"context"
	"testing"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// FuzzRoundTrip drives the random object generators and the stash with
// fuzzed input: from the seed, a random hub Task and TaskRun (every field
// release 3 added among them) convert to v1alpha1 and back unchanged on the
// wire; and a v1alpha1 Task carrying stash as its conversion annotation,
// whatever its bytes, converts to v1beta1 without error, to a Task that
// itself round trips unchanged. The same holds with v1 as the hub: random v1
// objects through each spoke, and the stash read by either spoke into v1. Run it longer with
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
	f.Add(uint64(9), []byte(`{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}},"v1beta1":{"spec":{"params":[{"name":"files","default":"[\"a\"]"}]}}}`))
	f.Add(uint64(10), []byte(`{"v1":{"spec":{"params":[{"name":"files","type":"object","properties":{"k":{}}},{"name":"files","type":"array"}]}}}`))
	f.Add(uint64(11), []byte(`{"v1":{"spec":{"params":[{"name":"files","type":"map"}],"pending":"1h"}}}`))

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
		if stash, ok := hub.Annotations[AnnotationConversionData]; ok {
			// Since v1 is the hub, v1beta1 is a spoke: it may carry what only
			// v1 expresses, never what it expresses itself.
			if !onlyV1Member(stash) {
				t.Fatalf("the v1beta1 Task carries a conversion annotation other than v1's: %s", stash)
			}
		}
		checkHubRoundTrip(t, ctx, throughJSON(t, hub), ConvertBetaTaskToAlpha, ConvertAlphaTaskToBeta)

		// v1, the hub: random objects through each spoke, and a stash of
		// any bytes read by both spokes into a v1 object that round trips.
		v1Task, v1Run := g.v1Task(), g.v1TaskRun()
		checkHubRoundTrip(t, ctx, v1Task, ConvertTaskFromHub, ConvertTaskToHub)
		checkHubRoundTrip(t, ctx, v1Task, ConvertBetaTaskFromHub, ConvertBetaTaskToHub)
		checkHubRoundTrip(t, ctx, v1Run, ConvertTaskRunFromHub, ConvertTaskRunToHub)
		checkHubRoundTrip(t, ctx, v1Run, ConvertBetaTaskRunFromHub, ConvertBetaTaskRunToHub)
		fromAlpha := &v1.Task{}
		if err := ConvertTaskToHub(ctx, spoke, fromAlpha); err != nil {
			t.Fatalf("converting a v1alpha1 Task with stash %q to v1: %v", stash, err)
		}
		beta := &v1beta1.Task{ObjectMeta: *spoke.ObjectMeta.DeepCopy(), Spec: v1beta1.TaskSpec{
			Params: []v1beta1.ParamSpec{{Name: "files", Default: ptrTo(`["a"]`)}, {Name: "image", Default: ptrTo(`{"k":"v"}`)}},
			Steps:  []v1beta1.Step{{Name: "build", Image: "golang:1.26"}}}}
		fromBeta := &v1.Task{}
		if err := ConvertBetaTaskToHub(ctx, beta, fromBeta); err != nil {
			t.Fatalf("converting a v1beta1 Task with stash %q to v1: %v", stash, err)
		}
		for _, hub := range []*v1.Task{fromAlpha, fromBeta} {
			if _, ok := hub.Annotations[AnnotationConversionData]; ok {
				t.Fatalf("the v1 Task carries the conversion annotation")
			}
			checkHubRoundTrip(t, ctx, throughJSON(t, hub), ConvertTaskFromHub, ConvertTaskToHub)
			checkHubRoundTrip(t, ctx, throughJSON(t, hub), ConvertBetaTaskFromHub, ConvertBetaTaskToHub)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

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
