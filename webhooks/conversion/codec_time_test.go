package conversion

import (
	"encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTimeCodecMatchesMetav1: each way the codec reads an object or a
// stash reads what metav1.Time's UnmarshalJSON reads, to the same time,
// or fails where it fails (timeReading), and answers write what its
// MarshalJSON writes.
func TestTimeCodecMatchesMetav1(t *testing.T) {
	type holder struct {
		Value metav1.Time  `json:"value"`
		Ptr   *metav1.Time `json:"ptr,omitempty"`
	}
	for _, in := range []string{
		`{"value":"2024-05-01T10:00:00Z","ptr":"2024-05-01T12:00:00+02:00"}`,
		`{"value":null,"ptr":null}`,
		`{"value":"2024-05-01t10:00:00z"}`,
		`{"value":"2024-05-01T10:00:00.123456789Z"}`,
		`{"value":"yesterday"}`,
		`{"value":5}`,
		`{"value":"\u0032024-05-01T10:00:00Z"}`,
		`{"value":{}}`,
		`{}`,
	} {
		var want, got holder
		wantErr := json.Unmarshal([]byte(in), &want)
		for name, options := range map[string]jsonv2.Options{
			"objectOptions": objectOptions, "typedObjectOptions": typedObjectOptions, "stashReadOptions": stashReadOptions,
		} {
			got = holder{}
			gotErr := jsonv2.Unmarshal([]byte(in), &got, options)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s: metav1 error %v, %s error %v", in, wantErr, name, gotErr)
				continue
			}
			if diff := cmp.Diff(want, got); wantErr == nil && diff != "" {
				t.Errorf("%s: read (-metav1 +%s):\n%s", in, name, diff)
			}
		}
		var read struct {
			Value stashTime  `json:"value"`
			Ptr   *stashTime `json:"ptr,omitempty"`
		}
		gotErr := jsonv2.Unmarshal([]byte(in), &read, stashReadOptions)
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%s: metav1 error %v, stashTime error %v", in, wantErr, gotErr)
		} else if diff := cmp.Diff(want, holder{Value: metav1.Time(read.Value), Ptr: (*metav1.Time)(read.Ptr)}); wantErr == nil && diff != "" {
			t.Errorf("%s: read (-metav1 +stashTime):\n%s", in, diff)
		}
		if wantErr != nil {
			continue
		}
		wantOut, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		gotOut, err := jsonv2.Marshal(got, answerOptions)
		if err != nil {
			t.Fatal(err)
		}
		if string(wantOut) != string(gotOut) {
			t.Errorf("%s: written %s, metav1 writes %s", in, gotOut, wantOut)
		}
	}
	if _, err := jsonv2.Marshal(holder{Value: metav1.NewTime(time.Date(2024, 5, 1, 12, 0, 0, 5, time.FixedZone("x", 7200)))}, answerOptions); err != nil {
		t.Error(err)
	}
}
