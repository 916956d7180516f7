package conversion

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// inlineRun is a v1 run whose inline taskSpec has one step whose script is
// script.
func inlineRun(script string) *v1.TaskRun {
	return &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec:       v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: []v1.Step{{Name: "s", Image: "alpine", Script: script}}}},
	}
}

// TestInlineRunIsMeasuredPinned: admission measures a run that gives a
// taskSpec as it will be once its first attempt pins it in status.taskSpec
// (docs/conversion.md, "The size of release 7's runs"), so that the largest
// run it admits still stashes whole once pinned: its taskSpec counts twice.
func TestInlineRunIsMeasuredPinned(t *testing.T) {
	measure := func(run *v1.TaskRun) int {
		t.Helper()
		size, err := SpokeAnnotationsSize(run)
		if err != nil {
			t.Fatal(err)
		}
		return size
	}
	base := measure(inlineRun("x")) // one byte of script, its key counted
	// Each byte of plain script counts twice; a byte JSON escapes
	// longest (\u003c) twelve times.
	for _, c := range []struct {
		char  string
		bytes int
	}{{"x", 2}, {"<", 12}} {
		if got := measure(inlineRun("x"+strings.Repeat(c.char, 1000))) - base; got != 1000*c.bytes {
			t.Errorf("1000 %q in a script add %d bytes; want %d", c.char, got, 1000*c.bytes)
		}
	}
	// The largest script of plain text that fits: over half the limit
	// does not.
	largest := 1 + (MaxAnnotationsBytes-base)/2
	if size := measure(inlineRun(strings.Repeat("x", largest))); size > MaxAnnotationsBytes {
		t.Errorf("a script of %d bytes: %d bytes of annotations, over the limit", largest, size)
	}
	if size := measure(inlineRun(strings.Repeat("x", largest+1))); size <= MaxAnnotationsBytes {
		t.Errorf("a script of %d bytes: %d bytes of annotations, within the limit", largest+1, size)
	}
	// A pinned run is measured as it is.
	run := inlineRun("echo")
	run.Status.TaskSpec = &v1.TaskSpec{Steps: []v1.Step{{Name: "s", Image: "alpine"}}}
	unpinned := inlineRun("echo")
	if measure(run) >= measure(unpinned) {
		t.Errorf("a run pinned to a smaller spec measures %d, not less than %d unpinned", measure(run), measure(unpinned))
	}
	t.Logf("an inline run of one step of a one-byte script: %d bytes of annotations pinned; the largest plain script that fits: %d bytes", base, largest)
}
