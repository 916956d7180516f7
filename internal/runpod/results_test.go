package runpod

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// resultsPod is the Pod of run "run" for a Task that declares the results
// version and digest, in that order, and has the steps a (a script), b (a
// command), c (a script that onError: continue lets pass) and as many more
// script steps as extra asks.
func resultsPod(t *testing.T, extra int) *corev1.Pod {
	t.Helper()
	steps := []v1.Step{
		{Name: "a", Image: "alpine", Script: "true"},
		{Name: "b", Image: "tool", Command: []string{"tool"}},
		{Name: "c", Image: "alpine", Script: "true", OnError: v1.OnErrorContinue},
	}
	for i := range extra {
		steps = append(steps, v1.Step{Name: fmt.Sprintf("x%d", i), Image: "alpine", Script: "true"})
	}
	return podFor(wrappers.Task("ns", "t").Steps(steps...).Results("version", "digest").Obj())
}

// ended is pod, its steps all completed, but those ends names: each
// terminated with its exit code and termination message. A step that exited
// non-zero fails the Pod, as the kubelet has it.
func ended(pod *corev1.Pod, ends map[int]stepEnd) *corev1.Pod {
	w := wrappers.PodStatus(pod).At(testTime).Succeeded()
	for i, end := range ends {
		w.Ended(i, end.code, end.message)
	}
	return withStatus(pod, w.Obj())
}

// stepEnd is how a step ended: its container's exit code and termination message.
type stepEnd struct {
	code    int32
	message string
}

// message is a script step's termination message: its exit code and results.
func message(code int, results ...string) string {
	var pairs []string
	for i := 0; i+1 < len(results); i += 2 {
		pairs = append(pairs, fmt.Sprintf("%q:%q", results[i], results[i+1]))
	}
	return fmt.Sprintf(`{"exitCode":%d,"results":{%s}}`, code, strings.Join(pairs, ","))
}

// sized pads a message that a script step wrote to exactly n bytes, within
// its one result's value.
func sized(n int) string {
	empty := message(0, "digest", "")
	return message(0, "digest", strings.Repeat("d", n-len(empty)))
}

func result(name, value string) v1.RunResult {
	return v1.RunResult{Name: name, Value: ptr.To(value)}
}

func TestResultsFromThePod(t *testing.T) {
	pod := resultsPod(t, 0)
	sixSteps := resultsPod(t, 3)
	tests := map[string]struct {
		pod         *corev1.Pod
		wantResults []v1.RunResult
		wantOutcome *Condition
	}{
		"no results written": {
			pod:         ended(pod, map[int]stepEnd{0: {0, message(0)}, 2: {0, message(0)}}),
			wantOutcome: succeeded(),
		},
		"in the Task's order, a later step's value wins": {
			pod: ended(pod, map[int]stepEnd{
				0: {0, message(0, "digest", "sha256:1", "version", "1.0")},
				2: {0, message(0, "digest", "sha256:2")},
			}),
			wantResults: []v1.RunResult{result("version", "1.0"), result("digest", "sha256:2")},
			wantOutcome: succeeded(),
		},
		"empty and hostile values kept as they are": {
			pod: ended(pod, map[int]stepEnd{
				0: {0, `{"exitCode":0,"results":{"version":"","digest":"a\"b\\c\n\u0000\ufffd"}}`},
			}),
			wantResults: []v1.RunResult{result("version", ""), result("digest", "a\"b\\c\n\x00\ufffd")},
			wantOutcome: succeeded(),
		},
		"undeclared results left out": {
			pod:         ended(pod, map[int]stepEnd{0: {0, message(0, "other", "x", "digest", "d")}}),
			wantResults: []v1.RunResult{result("digest", "d")},
			wantOutcome: succeeded(),
		},
		"a command step's message is its own: JSON or not, never read": {
			pod: ended(pod, map[int]stepEnd{
				0: {0, message(0, "digest", "from a")},
				1: {0, message(0, "digest", "forged")},
			}),
			wantResults: []v1.RunResult{result("digest", "from a")},
			wantOutcome: succeeded(),
		},
		"a command step's text message is ignored, however long": {
			pod:         ended(pod, map[int]stepEnd{1: {0, strings.Repeat("log line\n", 500)}}),
			wantOutcome: succeeded(),
		},
		"a short message that is no JSON is ignored": {
			pod:         ended(pod, map[int]stepEnd{0: {0, "the script wrote here"}, 2: {0, message(0, "digest", "d")}}),
			wantResults: []v1.RunResult{result("digest", "d")},
			wantOutcome: succeeded(),
		},
		"a message of exactly 4096 bytes fits": {
			pod:         ended(pod, map[int]stepEnd{0: {0, sized(4096)}}),
			wantResults: []v1.RunResult{result("digest", strings.Repeat("d", 4096-len(message(0, "digest", ""))))},
			wantOutcome: succeeded(),
		},
		"a message of 4096 bytes + 1 is too large": {
			pod:         ended(pod, map[int]stepEnd{0: {0, message(0, "digest", "from a")}, 2: {0, sized(4097)}}),
			wantResults: []v1.RunResult{result("digest", "from a")},
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "c"'s results do not fit its termination message: it holds 4097 bytes, over the limit of 4096 bytes; write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"a message the kubelet cut at 4096 bytes is too large": {
			pod:         ended(pod, map[int]stepEnd{0: {0, sized(5000)[:4096]}}),
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "a"'s results do not fit its termination message: the kubelet cut the message at 4096 bytes, what it keeps for each step of a Pod of 3 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"six steps share 12 KiB: a message cut at 2048 bytes is too large": {
			pod:         ended(sixSteps, map[int]stepEnd{5: {0, sized(3000)[:2048]}}),
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "x2"'s results do not fit its termination message: the kubelet cut the message at 2048 bytes, what it keeps for each step of a Pod of 6 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"the step says its results are too large": {
			pod: ended(pod, map[int]stepEnd{
				0: {0, message(0, "version", "1")},
				2: {0, `{"exitCode":3,"results":{},"resultsTooLarge":{"size":5210,"limit":4096,"cut":false}}`},
			}),
			wantResults: []v1.RunResult{result("version", "1")},
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "c"'s results do not fit its termination message: they take 5210 bytes, over the limit of 4096 bytes for each step of a Pod of 3 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"the step says its results are too large, a file longer than it reads": {
			pod:         ended(sixSteps, map[int]stepEnd{3: {0, `{"exitCode":0,"results":{},"resultsTooLarge":{"size":4130,"limit":2048,"cut":true}}`}}),
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "x0"'s results do not fit its termination message: they take 4130 bytes (more still: a result's file is longer than the 4097 bytes a step reads of it), over the limit of 2048 bytes for each step of a Pod of 6 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"six steps: a whole message of 2047 bytes fits": {
			pod:         ended(sixSteps, map[int]stepEnd{5: {0, sized(2047)}}),
			wantResults: []v1.RunResult{result("digest", strings.Repeat("d", 2047-len(message(0, "digest", ""))))},
			wantOutcome: succeeded(),
		},
		"onError continue: the run succeeds, saying which step was let pass": {
			pod:         ended(pod, map[int]stepEnd{2: {0, message(3, "digest", "partial")}}),
			wantResults: []v1.RunResult{result("digest", "partial")},
			wantOutcome: &Condition{metav1.ConditionTrue, v1.ReasonSucceeded, `every step exited 0 or was let pass by onError: continue ("c" exited with code 3)`},
		},
		"a step that failed hands back what it wrote": {
			pod:         ended(pod, map[int]stepEnd{0: {2, message(2, "version", "2.0")}}),
			wantResults: []v1.RunResult{result("version", "2.0")},
			wantOutcome: failed(v1.ReasonStepFailed, `step "a" exited with code 2`),
		},
		"the first thing that went wrong: results too large before a failed step": {
			pod:         ended(pod, map[int]stepEnd{0: {0, sized(5000)[:4096]}, 2: {1, message(1)}}),
			wantOutcome: failed(v1.ReasonResultsTooLarge, `step "a"'s results do not fit its termination message: the kubelet cut the message at 4096 bytes, what it keeps for each step of a Pod of 3 steps (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`),
		},
		"the first thing that went wrong: a failed step before results too large": {
			pod:         ended(sixSteps, map[int]stepEnd{0: {4, message(4)}, 3: {0, sized(4097)}}),
			wantOutcome: failed(v1.ReasonStepFailed, `step "a" exited with code 4`),
		},
		"a Pod of an earlier release names no script steps: nothing is read": {
			pod: func() *corev1.Pod {
				p := ended(pod, map[int]stepEnd{0: {0, message(3, "digest", "d")}})
				p.Annotations = nil
				return p
			}(),
			wantOutcome: succeeded(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantResults, Results(tc.pod)); diff != "" {
				t.Errorf("Results() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOutcome, Outcome(tc.pod, StepStates(tc.pod))); diff != "" {
				t.Errorf("Outcome() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContinuedSteps: a script step whose container exited 0 but whose
// script did not reports the script's code, with reason Continued; other
// steps report their containers' codes.
func TestContinuedSteps(t *testing.T) {
	pod := resultsPod(t, 0)
	type step struct {
		Name     string
		ExitCode int32
		Reason   string
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want []step
	}{
		"every step 0": {
			pod:  ended(pod, map[int]stepEnd{0: {0, message(0)}, 2: {0, message(0)}}),
			want: []step{{"a", 0, "Completed"}, {"b", 0, "Completed"}, {"c", 0, "Completed"}},
		},
		"continued with 3": {
			pod:  ended(pod, map[int]stepEnd{0: {0, message(0)}, 2: {0, message(3)}}),
			want: []step{{"a", 0, "Completed"}, {"b", 0, "Completed"}, {"c", 3, v1.StepReasonContinued}},
		},
		"a failed script step keeps its container's code": {
			pod:  ended(pod, map[int]stepEnd{0: {5, message(5)}}),
			want: []step{{"a", 5, "Error"}, {"b", 0, "Completed"}, {"c", 0, "Completed"}},
		},
		"a command step's message never changes its code": {
			pod:  ended(pod, map[int]stepEnd{1: {0, message(9)}}),
			want: []step{{"a", 0, "Completed"}, {"b", 0, "Completed"}, {"c", 0, "Completed"}},
		},
		"no message: the container's code": {
			pod:  ended(pod, nil),
			want: []step{{"a", 0, "Completed"}, {"b", 0, "Completed"}, {"c", 0, "Completed"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []step
			for _, s := range StepStates(tc.pod) {
				got = append(got, step{s.Name, ptr.Deref(s.ExitCode, -1), s.Reason})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("StepStates() (-want +got):\n%s", diff)
			}
		})
	}
}
