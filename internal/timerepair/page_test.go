package timerepair

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodePage checks what the repair reads of a LIST page: every item in
// order with its name and status times, the continue token wherever the
// list's metadata comes, and values of odd JSON types skipped, not fatal.
func TestDecodePage(t *testing.T) {
	type visited struct {
		Name  string
		Paths []string
	}
	cases := map[string]struct {
		page     string
		want     []visited
		wantNext string
	}{
		"items before metadata": {
			page: `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRunList","items":[
				{"metadata":{"namespace":"a","name":"one"},"spec":{"taskRef":{"name":"t"}},"status":{"startTime":"2024-05-01t10:00:00z"}},
				{"metadata":{"namespace":"a","name":"two"},"status":{"startTime":"2024-05-01T10:00:00Z"}}],
				"metadata":{"resourceVersion":"7","continue":"next"}}`,
			want:     []visited{{Name: "one", Paths: []string{"/status/startTime"}}, {Name: "two"}},
			wantNext: "next",
		},
		"metadata before items, last page": {
			page: `{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"one"},"status":{
				"attempts":[{"startTime":"2024-05-01 10:00:00Z"},{"completionTime":"2024-05-01t10:00:00z"}]}}]}`,
			want: []visited{{Name: "one", Paths: []string{"/status/attempts/0/startTime", "/status/attempts/1/completionTime"}}},
		},
		"no items": {page: `{"kind":"TaskRunList","items":null,"metadata":{}}`},
		"odd types are skipped and keep the indices": {
			page: `{"items":[{"metadata":{"name":"odd"},"status":{"startTime":17,"completionTime":null,
				"conditions":{"not":"a list"},
				"steps":["not an object",{"startedAt":"2024-05-01t10:00:00z","finishedAt":["x"]}]}}]}`,
			want: []visited{{Name: "odd", Paths: []string{"/status/steps/1/startedAt"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []visited
			next, err := decodePage(strings.NewReader(tc.page), func(run *storedRun) error {
				v := visited{Name: run.Metadata.Name}
				for _, op := range repairOps(&run.Status) {
					if op.Op == "replace" {
						v.Paths = append(v.Paths, op.Path)
					}
				}
				got = append(got, v)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
			if next != tc.wantNext {
				t.Errorf("continue token %q, want %q", next, tc.wantNext)
			}
		})
	}
}

// TestDecodePageRefusesWhatIsNoList checks that a body that is no list of
// objects fails the page instead of repairing nothing silently.
func TestDecodePageRefusesWhatIsNoList(t *testing.T) {
	for _, page := range []string{``, `[]`, `{"items":{}}`, `{"items":[{"metadata":`, `{"items":[]`} {
		if _, err := decodePage(strings.NewReader(page), func(*storedRun) error { return nil }); err == nil {
			t.Errorf("decodePage(%q) succeeded, want an error", page)
		}
	}
}

// TestRepairOpsOrder checks the patch of a run with every time malformed:
// a test then a replace per field, in the order of TaskRunStatus.
func TestRepairOpsOrder(t *testing.T) {
	const bad = `"2024-05-01t10:00:00z"`
	page := `{"items":[{"metadata":{"name":"all"},"status":{
		"attempts":[{"completionTime":` + bad + `,"startTime":` + bad + `}],
		"steps":[{"finishedAt":` + bad + `,"startedAt":` + bad + `}],
		"conditions":[{"lastTransitionTime":"2024-05-01T10:00:00Z"},{"lastTransitionTime":` + bad + `}],
		"completionTime":` + bad + `,"startTime":` + bad + `}}]}`
	var ops []patchOp
	if _, err := decodePage(strings.NewReader(page), func(run *storedRun) error {
		ops = repairOps(&run.Status)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []patchOp
	for _, path := range []string{"/status/startTime", "/status/completionTime", "/status/conditions/1/lastTransitionTime",
		"/status/steps/0/startedAt", "/status/steps/0/finishedAt", "/status/attempts/0/startTime", "/status/attempts/0/completionTime"} {
		want = append(want, patchOp{"test", path, "2024-05-01t10:00:00z"}, patchOp{"replace", path, "2024-05-01T10:00:00Z"})
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
}
