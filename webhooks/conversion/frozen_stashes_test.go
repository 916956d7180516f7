package conversion

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// The fixtures in testdata/release-N-stashes.json are the frozen releases'
// own output, not written by hand: random v1beta1 objects and the v1alpha1
// objects, stash included, that release N's conversion made of them. They
// were made by copying testdata/dump_stashes_test.go.txt into the release's
// tree (git archive COMMIT) as webhooks/conversion/zz_dump_test.go and
// running it there with FIXTURE_OUT set: release 2 at 1ba01c5, release 4 at
// 7d052ff.

// frozenStash is one fixture: an object as release N stored it (v1beta1)
// and as it served it to v1alpha1 clients.
type frozenStash struct {
	Kind     string          `json:"kind"`
	V1beta1  json.RawMessage `json:"v1beta1"`
	V1alpha1 json.RawMessage `json:"v1alpha1"`
}

// TestFrozenReleasesStashesRead reads the v1alpha1 objects releases 2 and 4
// served, as saved manifests and watch caches hold them: converted to v1
// (and on to v1beta1), each gives back exactly what the release stored. For
// release 4, the release a rollback from this one lands on, this release's
// v1alpha1 form of each object is byte for byte release 4's own, stash
// included: what this release writes, release 4 reads as its own.
func TestFrozenReleasesStashesRead(t *testing.T) {
	for _, release := range []struct {
		file string
		// same: this release must write what the release wrote.
		same bool
	}{{"testdata/release-2-stashes.json", false}, {"testdata/release-4-stashes.json", true}} {
		t.Run(release.file, func(t *testing.T) {
			data, err := os.ReadFile(release.file)
			if err != nil {
				t.Fatal(err)
			}
			var fixtures []frozenStash
			if err := json.Unmarshal(data, &fixtures); err != nil {
				t.Fatal(err)
			}
			if len(fixtures) < 100 {
				t.Fatalf("%d fixtures, want the file's 160", len(fixtures))
			}
			for i, f := range fixtures {
				switch f.Kind {
				case "Task":
					checkFrozenStash(t, i, f, release.same, ConvertTaskToHub, ConvertBetaTaskToHub, ConvertBetaTaskFromHub, ConvertTaskFromHub)
				case "TaskRun":
					checkFrozenStash(t, i, f, release.same, ConvertTaskRunToHub, ConvertBetaTaskRunToHub, ConvertBetaTaskRunFromHub, ConvertTaskRunFromHub)
				default:
					t.Fatalf("fixture %d: unknown kind %q", i, f.Kind)
				}
			}
		})
	}
}

func checkFrozenStash[A, B, H any, PA deepCopier[A], PB deepCopier[B], PH deepCopier[H]](
	t *testing.T, i int, f frozenStash, same bool,
	alphaToHub func(context.Context, PA, PH) error, betaToHub func(context.Context, PB, PH) error,
	hubToBeta func(context.Context, PH, PB) error, hubToAlpha func(context.Context, PH, PA) error,
) {
	t.Helper()
	ctx := t.Context()
	alpha, stored := PA(new(A)), PB(new(B))
	if err := json.Unmarshal(f.V1alpha1, alpha); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if err := json.Unmarshal(f.V1beta1, stored); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	fromAlpha, fromStored := PH(new(H)), PH(new(H))
	if err := alphaToHub(ctx, alpha, fromAlpha); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if err := betaToHub(ctx, stored, fromStored); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if !sameOnTheWire(t, fromStored, fromAlpha) {
		t.Fatalf("fixture %d (%s): the v1alpha1 form read to v1 lost something (-stored +read):\n%s", i, f.Kind, wireDiff(t, fromStored, fromAlpha))
	}
	back := PB(new(B))
	if err := hubToBeta(ctx, fromAlpha, back); err != nil {
		t.Fatalf("fixture %d: %v", i, err)
	}
	if !sameOnTheWire(t, stored, back) {
		t.Fatalf("fixture %d (%s): v1alpha1 -> v1 -> v1beta1 is not what was stored (-stored +result):\n%s", i, f.Kind, wireDiff(t, stored, back))
	}
	if same {
		written := PA(new(A))
		if err := hubToAlpha(ctx, fromStored, written); err != nil {
			t.Fatalf("fixture %d: %v", i, err)
		}
		if got := mustJSON(t, written); got != string(f.V1alpha1) {
			t.Fatalf("fixture %d (%s): this release's v1alpha1 form differs from the frozen release's:\nfrozen: %s\nthis:   %s", i, f.Kind, f.V1alpha1, got)
		}
	}
}
