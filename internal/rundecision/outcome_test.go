package rundecision

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// tooLarge is the error runpod.Build gives for a run whose one param makes
// its Pod pass 1 MiB.
func tooLarge() *runpod.TooLargeError {
	task := wrappers.Task("ns", "t").Param("x").Step("a", "alpine", "echo $(params.x)").Obj()
	values := params.Values{Params: map[string]string{"x": strings.Repeat("x", 1<<20)}}
	_, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, runpod.Inputs{Name: "run-pod", Params: values})
	var tooLarge *runpod.TooLargeError
	if !errors.As(err, &tooLarge) {
		panic("runpod.Build() of a Pod over 1 MiB gave " + err.Error())
	}
	return tooLarge
}

func TestOutcomes(t *testing.T) {
	tests := map[string]struct {
		got          *Outcome
		want         *Outcome
		wantFinished bool
	}{
		"none": {got: FromPod(nil)},
		"from the Pod": {
			got:          FromPod(&runpod.Condition{Status: metav1.ConditionTrue, Reason: v1.ReasonSucceeded, Message: "every step exited 0"}),
			want:         succeeded(),
			wantFinished: true,
		},
		"a Pod too large": {
			got: PodTooLarge(tooLarge()),
			want: Failed(v1.ReasonInvalidParams, "with its params and workspace paths expanded, the Pod's images, scripts, commands, args, "+
				"working directories and env values would hold 1048587 bytes, over the limit of 1048576 bytes (1 MiB); no Pod was created"),
			wantFinished: true,
		},
		"a Pod not ours": {
			got:          PodNotOurs("run-pod"),
			want:         &Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" already exists and is not controlled by this TaskRun`},
			wantFinished: true,
		},
		"a Pod deleted": {
			got:          PodDeleted("run-pod"),
			want:         &Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`},
			wantFinished: true,
		},
		"going on": {
			got:  Unknown(v1.ReasonRunning, "running step %q", "a"),
			want: &Outcome{metav1.ConditionUnknown, v1.ReasonRunning, `running step "a"`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			type outcome struct {
				Outcome  *Outcome
				Finished bool
			}
			if diff := cmp.Diff(outcome{tc.want, tc.wantFinished}, outcome{tc.got, tc.got.Finished()}); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
