package v1beta1

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDurationKeepsItsText(t *testing.T) {
	tests := map[string]struct {
		json   string // what the Duration is decoded from; empty: built in Go
		change func(*Duration)
		want   string // what it encodes to
		value  time.Duration
	}{
		"written short":            {json: `"10m"`, want: `"10m"`, value: 10 * time.Minute},
		"written canonically":      {json: `"10m0s"`, want: `"10m0s"`, value: 10 * time.Minute},
		"written in seconds":       {json: `"3600s"`, want: `"3600s"`, value: time.Hour},
		"written with a fraction":  {json: `"1.5h"`, want: `"1.5h"`, value: 90 * time.Minute},
		"zero written as 0":        {json: `"0"`, want: `"0"`, value: 0},
		"set from Go":              {change: func(d *Duration) { d.Duration = 90 * time.Minute }, want: `"1h30m0s"`, value: 90 * time.Minute},
		"changed after decoding":   {json: `"10m"`, change: func(d *Duration) { d.Duration = time.Hour }, want: `"1h0m0s"`, value: time.Hour},
		"set to what it said":      {json: `"60m"`, change: func(d *Duration) { d.Duration = time.Hour }, want: `"60m"`, value: time.Hour},
		"negative, as CEL refuses": {json: `"-1h"`, want: `"-1h"`, value: -time.Hour},
		"null, left as it is":      {json: `null`, want: `"0s"`, value: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var d Duration
			if tc.json != "" {
				if err := json.Unmarshal([]byte(tc.json), &d); err != nil {
					t.Fatalf("decoding %s: %v", tc.json, err)
				}
			}
			if tc.change != nil {
				tc.change(&d)
			}
			got, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("encoded (-want +got):\n%s", diff)
			}
			if d.Duration != tc.value {
				t.Errorf("value %v, want %v", d.Duration, tc.value)
			}
		})
	}
}

func TestDurationRefusesWhatIsNoDuration(t *testing.T) {
	for _, in := range []string{`"soon"`, `""`, `600`, `{"duration":"1h"}`} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("decoding %s: no error, got %v", in, d)
		}
	}
}

// TestDurationComparesByValue: go-cmp, and every test that uses it, sees
// 10m and 10m0s as the same timeout.
func TestDurationComparesByValue(t *testing.T) {
	var short, long Duration
	if err := json.Unmarshal([]byte(`"10m"`), &short); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`"10m0s"`), &long); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(short, long); diff != "" {
		t.Errorf("10m and 10m0s differ (-10m +10m0s):\n%s", diff)
	}
	if cmp.Equal(short, *NewDuration(time.Hour)) {
		t.Error("10m equals 1h")
	}
}

// TestDurationThroughUnstructured: apimachinery's unstructured conversion,
// which server-side apply and dynamic clients use, keeps the text too.
func TestDurationThroughUnstructured(t *testing.T) {
	var spec TaskRunSpec
	if err := json.Unmarshal([]byte(`{"taskRef":{"name":"t"},"timeout":"10m"}`), &spec); err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("10m", u["timeout"]); diff != "" {
		t.Errorf("unstructured timeout (-want +got):\n%s", diff)
	}
	var back TaskRunSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Timeout.String(); got != "10m" {
		t.Errorf("timeout back from unstructured is %q, want 10m", got)
	}
}
