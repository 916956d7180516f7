package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestStart(t *testing.T) {
	h := newHarness(t)
	h.Create(t, greetTask("greet"))
	h.startController(t)

	t.Run("with params and defaults", func(t *testing.T) {
		got := h.kubectlTask(t, "start", "greet", "-p", "greeting=hi", "--name", "greet-1", "--timeout", "10m")
		want := result{Stdout: "TaskRun greet-1 started in namespace NS\nFollow its logs with: kubectl task logs greet-1 -f -n NS\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("start (-want +got):\n%s", diff)
		}
		wantSpec := v1.TaskRunSpec{
			TaskRef:  v1.TaskRef{Name: "greet"},
			Params:   []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
			Timeouts: v1.Timeouts{Total: v1.NewDuration(10 * time.Minute)},
		}
		if diff := cmp.Diff(wantSpec, h.TaskRun(t, "greet-1").Spec); diff != "" {
			t.Errorf("TaskRun spec (-want +got):\n%s", diff)
		}
		// The controller runs the step with the value given and the default.
		pod := &corev1.Pod{}
		testenv.Eventually(t, func() (bool, string) {
			err := env.Client.Get(context.Background(), h.Key("greet-1-pod"), pod)
			return err == nil, fmt.Sprint(err)
		}, "the run's Pod")
		if cmd := pod.Spec.Containers[0].Command; !slices.Contains(cmd, `echo "hi, world"`) {
			t.Errorf("step say runs %q, want the script with hi and the default world", cmd)
		}
		// describe shows where each value comes from, and the controller's
		// Event. Events are recorded asynchronously, after the Pod exists, so
		// wait for the Event before reading the whole description.
		startedEvent := regexp.MustCompile(`(?m)^  Normal +Started +\d+s +TaskRun/greet-1 +created Pod greet-1-pod$`)
		var out string
		testenv.Eventually(t, func() (bool, string) {
			out = h.kubectlTask(t, "describe", "greet-1").Stdout
			return startedEvent.MatchString(out), out
		}, "describe greet-1 to show the Started Event")
		for _, want := range []string{
			"  greeting   string   hi      run\n",
			"  name       string   world   default\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("describe greet-1 shows no %q:\n%s", want, out)
			}
		}
		// The header's labels align with its longest, "Pending timeout:".
		if timeout := regexp.MustCompile(`(?m)^Timeout: +10m0s$`); !timeout.MatchString(out) {
			t.Errorf("describe greet-1 shows no %q:\n%s", timeout, out)
		}
	})

	t.Run("a generated name", func(t *testing.T) {
		got := h.kubectlTask(t, "start", "greet", "-p", "greeting=hey", "-p", "name=you", "--generate-name")
		want := regexp.MustCompile(`^TaskRun (greet-[a-z0-9]{5}) started in namespace NS\nFollow its logs with: kubectl task logs (greet-[a-z0-9]{5}) -f -n NS\n$`)
		m := want.FindStringSubmatch(got.Stdout)
		if got.Code != 0 || got.Stderr != "" || m == nil || m[1] != m[2] {
			t.Fatalf("start --generate-name: %+v, want stdout matching %s", got, want)
		}
		if diff := cmp.Diff([]v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hey")}, {Name: "name", Value: *v1.NewStringValue("you")}}, h.TaskRun(t, m[1]).Spec.Params); diff != "" {
			t.Errorf("TaskRun params (-want +got):\n%s", diff)
		}
	})

	t.Run("refuses a required param without a value", func(t *testing.T) {
		before := h.TaskRunNames(t)
		got := h.kubectlTask(t, "start", "greet", "-p", "name=you", "--name", "greet-refused")
		want := result{Code: 2, Stderr: `error: Task "greet" needs a value for 1 param; give each with -p NAME=VALUE (nothing was created):
  greeting   What to say
These have defaults, and may be left out:
  name=world   Who to greet
`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("start (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
			t.Errorf("TaskRuns after the refusal (-before +after):\n%s", diff)
		}
	})

	t.Run("--showlog follows the steps and exits 0 when the run succeeds", func(t *testing.T) {
		h.logs = cannedLogs{"prepare": "preparing\n", "say": "hi, world\n"}
		defer func() { h.logs = nil }()
		done := h.startAsync(t, "start", "greet", "-p", "greeting=hi", "--name", "greet-ok", "--showlog")
		h.Kubelet(t, "greet-ok-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
		got := <-done
		got.Stdout = regexp.MustCompile(`succeeded in \d+s`).ReplaceAllString(got.Stdout, "succeeded in Ns")
		want := result{Stdout: `TaskRun greet-ok started in namespace NS
Follow its logs with: kubectl task logs greet-ok -f -n NS
[prepare] preparing
[say] hi, world
TaskRun greet-ok succeeded in Ns
`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("start --showlog (-want +got):\n%s", diff)
		}
	})

	t.Run("--showlog exits by the run's outcome when its logs stop", func(t *testing.T) {
		h.logs = hiccupLogs{}
		defer func() { h.logs = nil }()
		tests := map[string]struct {
			run string
			// kubelet says how the run's Pod ends.
			kubelet func(*wrappers.PodStatusWrapper)
			want    result
		}{
			"the run succeeds": {
				run: "greet-hiccup-ok", kubelet: func(w *wrappers.PodStatusWrapper) { w.Succeeded() },
				want: result{
					Stdout: "TaskRun greet-hiccup-ok started in namespace NS\nFollow its logs with: kubectl task logs greet-hiccup-ok -f -n NS\n" +
						"[prepare] preparing\nTaskRun greet-hiccup-ok succeeded in Ns\n",
					Stderr: `warning: the logs stopped: reading the log of step "say": stream reset; waiting for TaskRun greet-hiccup-ok to finish` + "\n",
				},
			},
			"the run fails": {
				run: "greet-hiccup-bad", kubelet: func(w *wrappers.PodStatusWrapper) { w.StepFailed(1, 3) },
				want: result{Code: 1,
					Stdout: "TaskRun greet-hiccup-bad started in namespace NS\nFollow its logs with: kubectl task logs greet-hiccup-bad -f -n NS\n" +
						"[prepare] preparing\n",
					Stderr: `warning: the logs stopped: reading the log of step "say": stream reset; waiting for TaskRun greet-hiccup-bad to finish` + "\n" +
						`error: TaskRun greet-hiccup-bad failed (StepFailed): step "say" exited with code 3; see kubectl task describe greet-hiccup-bad -n NS` + "\n",
				},
			},
		}
		for name, tc := range tests {
			t.Run(name, func(t *testing.T) {
				done := h.startAsync(t, "start", "greet", "-p", "greeting=hi", "--name", tc.run, "--showlog")
				h.Kubelet(t, tc.run+"-pod", tc.kubelet)
				got := <-done
				got.Stdout = regexp.MustCompile(`succeeded in \d+s`).ReplaceAllString(got.Stdout, "succeeded in Ns")
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("start --showlog (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("--wait exits 1 with the reason when the run fails", func(t *testing.T) {
		done := h.startAsync(t, "start", "greet", "-p", "greeting=hi", "--name", "greet-bad", "--wait")
		h.Kubelet(t, "greet-bad-pod", func(w *wrappers.PodStatusWrapper) { w.StepFailed(1, 3) })
		want := result{Code: 1,
			Stdout: "TaskRun greet-bad started in namespace NS\nFollow its logs with: kubectl task logs greet-bad -f -n NS\n",
			Stderr: `error: TaskRun greet-bad failed (StepFailed): step "say" exited with code 3; see kubectl task describe greet-bad -n NS` + "\n",
		}
		if diff := cmp.Diff(want, <-done); diff != "" {
			t.Errorf("start --wait (-want +got):\n%s", diff)
		}
	})
}

// startAsync runs a command that waits for a run, while the test plays the
// kubelet; the result arrives on the channel.
func (h *harness) startAsync(t *testing.T, args ...string) <-chan result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- h.kubectlTask(t, args...) }()
	return done
}

// hiccupLogs serves the first step's log, then fails to open the second's,
// as a log stream that breaks midway does.
type hiccupLogs struct{}

func (hiccupLogs) Steps(context.Context, bool) ([]string, error) {
	return []string{"prepare", "say"}, nil
}

func (hiccupLogs) Open(_ context.Context, step string, _ bool) (io.ReadCloser, error) {
	if step == "say" {
		return nil, errors.New("stream reset")
	}
	return io.NopCloser(strings.NewReader("preparing\n")), nil
}
