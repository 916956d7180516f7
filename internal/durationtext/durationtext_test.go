package durationtext

import (
	"encoding/json"
	"testing"
	"time"
)

func TestStringKeepsTheTextThatSaysTheValue(t *testing.T) {
	tests := map[string]struct {
		value time.Duration
		text  string
		want  string
	}{
		"written short":         {value: 10 * time.Minute, text: "10m", want: "10m"},
		"written in seconds":    {value: time.Hour, text: "3600s", want: "3600s"},
		"zero written as 0":     {value: 0, text: "0", want: "0"},
		"no text":               {value: 90 * time.Minute, want: "1h30m0s"},
		"changed since written": {value: time.Hour, text: "10m", want: "1h0m0s"},
		"text no duration":      {value: time.Hour, text: "soon", want: "1h0m0s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := String(tc.value, tc.text); got != tc.want {
				t.Errorf("String(%v, %q) = %q, want %q", tc.value, tc.text, got, tc.want)
			}
		})
	}
}

func TestDecodeRefusesWhatIsNoDuration(t *testing.T) {
	for _, in := range []string{`"soon"`, `""`, `600`, `{"duration":"1h"}`, `"`} {
		if d, text, err := Decode([]byte(in)); err == nil {
			t.Errorf("decoding %s: no error, got %v written %q", in, d, text)
		}
	}
}

// FuzzJSONIsEncodingJSONs holds the shortcuts of Decode and Encode for plain
// strings to what encoding/json makes of the same string: the same text,
// value and error, and the same bytes written.
func FuzzJSONIsEncodingJSONs(f *testing.F) {
	for _, seed := range []string{`"10m"`, `"1h30m0s"`, `"1µs"`, `"1\u0068"`, `"1h\\"`, `"<1h>"`, "\"1h\x01\"", `"soon"`, `""`, `"`, `600`, `null`, `"1h" `, "\"\xff\""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotText, gotErr := Decode(data)

		var want time.Duration
		var wantText string
		wantErr := json.Unmarshal(data, &wantText)
		if string(data) == "null" {
			wantErr = nil
		} else if wantErr == nil {
			want, wantErr = time.ParseDuration(wantText)
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("decoding %q: error %v, encoding/json's way %v", data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		if got != want || gotText != wantText {
			t.Errorf("decoding %q: %v written %q, encoding/json's way %v written %q", data, got, gotText, want, wantText)
		}
		text := String(got, gotText)
		out, err := Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		if wantOut, _ := json.Marshal(text); string(out) != string(wantOut) {
			t.Errorf("encoding %q: %s, encoding/json writes %s", text, out, wantOut)
		}
	})
}
