package runstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestParseTerminationMessage(t *testing.T) {
	tests := map[string]struct {
		message string
		want    TerminationMessage
		wantErr bool
	}{
		"exit code only":          {message: `{"exitCode":0}`, want: TerminationMessage{ExitCode: ptr.To[int32](0)}},
		"exit code and results":   {message: `{"exitCode":3,"results":{"a":"x\ny","b":""}}`, want: TerminationMessage{ExitCode: ptr.To[int32](3), Results: map[string]string{"a": "x\ny", "b": ""}}},
		"fields it does not know": {message: `{"exitCode":1,"later":true}`, want: TerminationMessage{ExitCode: ptr.To[int32](1)}},
		"no exit code":            {message: `{"results":{}}`, wantErr: true},
		"text":                    {message: "done", wantErr: true},
		"cut short":               {message: `{"exitCode":0,"results":{"a":"xx`, wantErr: true},
		"text after the object":   {message: `{"exitCode":0}}`, wantErr: true},
		"two objects":             {message: `{"exitCode":0} {"exitCode":1}`, wantErr: true},
		"a value of another type": {message: `{"exitCode":0,"results":{"a":1}}`, wantErr: true},
		"empty":                   {message: "", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTerminationMessage(tc.message)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseTerminationMessage(%q) error = %v, want error %v", tc.message, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTerminationMessage(%q) (-want +got):\n%s", tc.message, diff)
			}
		})
	}
}

func TestTerminationMessageLimit(t *testing.T) {
	for containers, want := range map[int]int{0: 4096, 1: 4096, 3: 4096, 4: 3072, 6: 2048, 12: 1024, 20: 614} {
		if got := TerminationMessageLimit(containers); got != want {
			t.Errorf("TerminationMessageLimit(%d) = %d, want %d", containers, got, want)
		}
	}
}

func TestNamesAnnotation(t *testing.T) {
	if _, needed := NamesAnnotation(nil); needed {
		t.Error("NamesAnnotation(nil) is needed, want not")
	}
	value, needed := NamesAnnotation([]string{"b", "a"})
	if !needed || value != `["b","a"]` {
		t.Errorf("NamesAnnotation = %q, %v", value, needed)
	}
	for annotation, want := range map[string][]string{value: {"b", "a"}, "": nil, "not json": nil, `{"a":1}`: nil} {
		if diff := cmp.Diff(want, AnnotatedNames(map[string]string{AnnotationResults: annotation}, AnnotationResults)); diff != "" {
			t.Errorf("AnnotatedNames(%q) (-want +got):\n%s", annotation, diff)
		}
	}
	if got := ResultPath("digest"); got != "/minitask/results/digest" {
		t.Errorf("ResultPath = %q", got)
	}
}
