package conversion

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// The fixtures in testdata/release-6-stashes.json are release 6's own
// output, not written by hand: random v1 objects, release 7's fields among
// them, and the v1beta1 and v1alpha1 objects, stash included, that release
// 6's conversion made of them. They were made by copying
// testdata/dump_v1_stashes_test.go.txt into release 6's tree as
// webhooks/conversion/zz_dump_test.go and running it there with
// FIXTURE_OUT set.

// frozenV1Stash is one fixture: an object as a release that stores v1
// stored it, and as it served it to v1beta1 and v1alpha1 clients.
type frozenV1Stash struct {
	Kind     string          `json:"kind"`
	V1       json.RawMessage `json:"v1"`
	V1beta1  json.RawMessage `json:"v1beta1"`
	V1alpha1 json.RawMessage `json:"v1alpha1"`
}

// TestRelease6StashesRead reads the v1beta1 and v1alpha1 objects release 6
// served, as saved manifests and watch caches hold them: converted to v1,
// each gives back exactly what release 6 stored. And this release's
// v1beta1 and v1alpha1 forms of each stored object are byte for byte
// release 6's own, stash included: what this release writes, release 6
// (the release a rollback goes back to) reads as its own, and a client
// sees no change across the rollback.
func TestRelease6StashesRead(t *testing.T) {
	data, err := os.ReadFile("testdata/release-6-stashes.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []frozenV1Stash
	if err := json.Unmarshal(data, &fixtures); err != nil {
		t.Fatal(err)
	}
	if len(fixtures) < 100 {
		t.Fatalf("%d fixtures, want the file's 100", len(fixtures))
	}
	for i, f := range fixtures {
		switch f.Kind {
		case "Task":
			checkFrozenV1Stash(t, i, f, ConvertTaskToHub, ConvertBetaTaskToHub, ConvertTaskFromHub, ConvertBetaTaskFromHub)
		case "TaskRun":
			checkFrozenV1Stash(t, i, f, ConvertTaskRunToHub, ConvertBetaTaskRunToHub, ConvertTaskRunFromHub, ConvertBetaTaskRunFromHub)
		default:
			t.Fatalf("fixture %d: unknown kind %q", i, f.Kind)
		}
	}
}

func checkFrozenV1Stash[A, B, H any, PA deepCopier[A], PB deepCopier[B], PH deepCopier[H]](
	t *testing.T, i int, f frozenV1Stash,
	alphaToHub func(context.Context, PA, PH) error, betaToHub func(context.Context, PB, PH) error,
	hubToAlpha func(context.Context, PH, PA) error, hubToBeta func(context.Context, PH, PB) error,
) {
	t.Helper()
	ctx := t.Context()
	stored, alpha, beta := PH(new(H)), PA(new(A)), PB(new(B))
	for _, part := range []struct {
		text json.RawMessage
		into any
	}{{f.V1, stored}, {f.V1alpha1, alpha}, {f.V1beta1, beta}} {
		if err := json.Unmarshal(part.text, part.into); err != nil {
			t.Fatalf("fixture %d: %v", i, err)
		}
	}
	fromAlpha, fromBeta := PH(new(H)), PH(new(H))
	if err := alphaToHub(ctx, alpha, fromAlpha); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if err := betaToHub(ctx, beta, fromBeta); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	for version, got := range map[string]PH{"v1alpha1": fromAlpha, "v1beta1": fromBeta} {
		if !sameOnTheWire(t, stored, got) {
			t.Fatalf("fixture %d (%s): release 6's %s form read to v1 is not what it stored (-stored +read):\n%s",
				i, f.Kind, version, wireDiff(t, stored, got))
		}
	}
	writtenAlpha, writtenBeta := PA(new(A)), PB(new(B))
	if err := hubToAlpha(ctx, stored, writtenAlpha); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if err := hubToBeta(ctx, stored, writtenBeta); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if got := mustJSON(t, writtenAlpha); got != string(f.V1alpha1) {
		t.Fatalf("fixture %d (%s): this release's v1alpha1 form differs from release 6's:\nrelease 6: %s\nthis:      %s", i, f.Kind, f.V1alpha1, got)
	}
	if got := mustJSON(t, writtenBeta); got != string(f.V1beta1) {
		t.Fatalf("fixture %d (%s): this release's v1beta1 form differs from release 6's:\nrelease 6: %s\nthis:      %s", i, f.Kind, f.V1beta1, got)
	}
}
