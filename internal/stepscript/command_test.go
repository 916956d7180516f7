package stepscript

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestCommand pins where the command puts each argument: kwok's stages read
// the script as the argument after "minitask-step" (hack/kwok/stages), and
// the controller's Pods of earlier releases carry these commands; a timed
// step's wrapper has a name of its own, which says that its two arguments
// come before the results.
func TestCommand(t *testing.T) {
	withResults := wrappers.Task("ns", "t").Step("a", "alpine:3", "true").Step("b", "alpine:3", "true").
		Step("c", "alpine:3", "true").Step("d", "alpine:3", "true").Obj()
	withResults.Spec.Results = []v1.ResultDeclaration{{Name: "version"}, {Name: "digest"}}
	tests := map[string]struct {
		script  string
		onError v1.OnError
		timer   Timer
		task    *v1.Task
		want    []string
	}{
		"one step, no results, onError unset": {
			script: "true",
			task:   wrappers.Task("ns", "t").Step("work", "alpine:3", "true").Obj(),
			want:   []string{"/bin/sh", "-c", "WRAPPER", "minitask-step", "true", "stopAndFail", "4096"},
		},
		"results in the Task's order, the kubelet's 12 KiB shared by four steps": {
			script:  `echo "$x"`,
			onError: v1.OnErrorContinue,
			task:    withResults,
			want:    []string{"/bin/sh", "-c", "WRAPPER", "minitask-step", `echo "$x"`, "continue", "3072", "version", "digest"},
		},
		"a timeout: the timed wrapper, its timeout and grace in whole seconds, rounded up, before the results": {
			script: "make",
			timer:  Timer{Timeout: 1500 * time.Millisecond, Grace: 30 * time.Second},
			task:   withResults,
			want:   []string{"/bin/sh", "-c", "WRAPPER", "minitask-timed-step", "make", "stopAndFail", "3072", "2", "30", "version", "digest"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Command(tc.script, tc.onError, tc.timer, ProtocolFor(tc.task))
			wrapper := scriptWrapper
			if tc.timer.Timeout > 0 {
				wrapper = timedWrapper
			}
			if got[2] != wrapper {
				t.Errorf("the third argument is not the wrapper: %.80q", got[2])
			}
			got[2] = "WRAPPER"
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}
