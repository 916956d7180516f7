package stagetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sigs.k8s.io/kwok/pkg/utils/expression"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/yaml"
)

// stepDone is the stage pod-step-done: its delay's jq expression and its
// status patch's template.
type stepDone struct {
	delay    string
	template string
}

func loadStepDone(t *testing.T) stepDone {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "stages", "pod-step-done.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stage struct {
		Spec struct {
			Delay struct {
				DurationFrom struct {
					JQ struct {
						Expression string `json:"expression"`
					} `json:"jq"`
				} `json:"durationFrom"`
			} `json:"delay"`
			Steps []struct {
				Patch struct {
					Template string `json:"template"`
				} `json:"patch"`
			} `json:"steps"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &stage); err != nil {
		t.Fatal(err)
	}
	return stepDone{delay: stage.Spec.Delay.DurationFrom.JQ.Expression, template: stage.Spec.Steps[0].Patch.Template}
}

// step is one step of a test Pod: a script step, wrapped as the controller
// wraps it, or a command step.
type step struct {
	name    string
	script  string
	command []string
	onError string
	// timeout, if set, is the step's timeout in seconds: its wrapper is
	// the timed one.
	timeout string
}

// wrapperArgs stands for the controller's wrapper text: the stage must never
// read it, only the arguments after it.
const wrapperArgs = "'/bin/sh' -c \"$1\"\ncode=$?\nsleep 99\nexit 42\n"

// podRunning returns a Pod with init containers, as JSON, whose step
// running runs since startedAt, the steps before it completed, for a Task
// whose results are declared.
func podRunning(steps []step, declared []string, running int, startedAt time.Time) map[string]any {
	return testPod(steps, declared, running, startedAt, false)
}

// chainedRunning returns a chained Pod, as JSON, taken up at startedAt: the
// steps before running completed, the one before it at startedAt plus a
// second per step, and every later step's container runs, waiting for its
// turn.
func chainedRunning(steps []step, declared []string, running int, startedAt time.Time) map[string]any {
	return testPod(steps, declared, running, startedAt, true)
}

func testPod(steps []step, declared []string, running int, startedAt time.Time, chained bool) map[string]any {
	var containers []map[string]any
	var statuses []map[string]any
	for i, s := range steps {
		command := s.command
		if s.script != "" {
			onError := s.onError
			if onError == "" {
				onError = "stopAndFail"
			}
			args := []string{s.script, onError, "4096"}
			wrapper := "minitask-step"
			timer := []string{s.timeout, "30"}
			if s.timeout != "" && !chained {
				args, wrapper = append(args, timer...), "minitask-timed-step"
			}
			if chained {
				after, self := "", ""
				if i > 0 {
					after = strconv.Itoa(i)
				}
				if i < len(steps)-1 {
					self = strconv.Itoa(i + 1)
				}
				args = append(args, after, self)
				wrapper = "minitask-chained-step"
				if s.timeout != "" {
					args, wrapper = append(args, timer...), "minitask-timed-chained-step"
				}
			}
			command = append(append([]string{"/bin/sh", "-c", wrapperArgs, wrapper}, args...), declared...)
		}
		containers = append(containers, map[string]any{"name": "step-" + s.name, "image": "alpine:3", "command": command})
		state := map[string]any{"waiting": map[string]any{"reason": "PodInitializing"}}
		switch {
		case i < running:
			terminated := map[string]any{"exitCode": 0, "reason": "Completed"}
			if chained {
				terminated["startedAt"] = startedAt.UTC().Format(time.RFC3339)
				terminated["finishedAt"] = startedAt.Add(time.Duration(i+1) * time.Second).UTC().Format(time.RFC3339)
			}
			state = map[string]any{"terminated": terminated}
		case i == running || chained:
			state = map[string]any{"running": map[string]any{"startedAt": startedAt.UTC().Format(time.RFC3339)}}
		}
		statuses = append(statuses, map[string]any{"name": "step-" + s.name, "state": state})
	}
	last := len(steps) - 1
	phase := "Pending"
	if running == last || chained {
		phase = "Running"
	}
	pod := map[string]any{
		"metadata": map[string]any{"name": "run-pod", "namespace": "default"},
		"spec":     map[string]any{"initContainers": containers[:last], "containers": containers[last:]},
		"status": map[string]any{
			"phase":                 phase,
			"startTime":             startedAt.UTC().Format(time.RFC3339),
			"initContainerStatuses": statuses[:last],
			"containerStatuses":     statuses[last:],
		},
	}
	if chained {
		pod["metadata"].(map[string]any)["annotations"] = map[string]any{"minitask.dev/pod-shape": "chained"}
		pod["spec"] = map[string]any{"containers": containers}
		status := pod["status"].(map[string]any)
		delete(status, "initContainerStatuses")
		status["containerStatuses"] = statuses
	}
	// Through JSON, as kwok sees the Pod.
	data, _ := json.Marshal(pod)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// ending is how the stage ends the running step.
type ending struct {
	ExitCode int
	Reason   string
	Message  string
	Phase    string
}

func (d stepDone) render(t *testing.T, pod map[string]any, container string) ending {
	t.Helper()
	phase, ends, out := d.renderAll(t, pod)
	end, ok := ends[container]
	if !ok {
		t.Fatalf("the rendered status ends no container %s: %s", container, out)
	}
	end.Phase = phase
	return end
}

// renderAll renders the stage's status patch of pod: the Pod's phase, how
// each container it ends (or has ended) ended, by name, and the patch.
func (d stepDone) renderAll(t *testing.T, pod map[string]any) (string, map[string]ending, []byte) {
	t.Helper()
	out, err := gotpl.NewRenderer(nil).ToJSON(d.template, pod)
	if err != nil {
		t.Fatalf("rendering pod-step-done: %v", err)
	}
	var status struct {
		Phase     string            `json:"phase"`
		Init      []containerStatus `json:"initContainerStatuses"`
		Container []containerStatus `json:"containerStatuses"`
	}
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatalf("reading the rendered status %s: %v", out, err)
	}
	ends := map[string]ending{}
	for _, cs := range append(status.Init, status.Container...) {
		if term := cs.State.Terminated; term != nil {
			ends[cs.Name] = ending{ExitCode: term.ExitCode, Reason: term.Reason, Message: term.Message}
		}
	}
	return status.Phase, ends, out
}

type containerStatus struct {
	Name  string `json:"name"`
	State struct {
		Terminated *struct {
			ExitCode int    `json:"exitCode"`
			Reason   string `json:"reason"`
			Message  string `json:"message"`
		} `json:"terminated"`
	} `json:"state"`
}

func TestStepDoneEndsStepsAsTheWrapperWould(t *testing.T) {
	d := loadStepDone(t)
	now := time.Now().Truncate(time.Second)
	declared := []string{"version", "digest"}
	fetch := step{name: "fetch", script: "result version 1.0\nresult other ignored\nsleep 1"}
	tool := step{name: "tool", command: []string{"tool", "--out", "x"}}
	tests := map[string]struct {
		steps   []step
		running int
		want    ending
	}{
		"a script step's result": {
			steps: []step{fetch, tool, {name: "report", script: "true"}},
			want:  ending{Reason: "Completed", Message: `{"exitCode":0,"results":{"version":"1.0"}}`, Phase: "Pending"},
		},
		"a command step writes no message": {
			steps:   []step{fetch, tool, {name: "report", script: "true"}},
			running: 1,
			want:    ending{Reason: "Completed", Phase: "Running"},
		},
		"results of earlier steps stay, a later line wins, quotes removed": {
			steps:   []step{fetch, tool, {name: "report", script: "result digest \"sha256:a b\"\n  result version '2.0'\nexit 0"}},
			running: 2,
			want:    ending{Reason: "Completed", Message: `{"exitCode":0,"results":{"digest":"sha256:a b","version":"2.0"}}`, Phase: "Succeeded"},
		},
		"onError continue: the container exits 0, the message says 3": {
			steps:   []step{fetch, tool, {name: "report", script: "result digest d\nexit 3", onError: "continue"}},
			running: 2,
			want:    ending{Reason: "Completed", Message: `{"exitCode":3,"results":{"digest":"d","version":"1.0"}}`, Phase: "Succeeded"},
		},
		"stopAndFail: the container exits 3": {
			steps:   []step{fetch, tool, {name: "report", script: "exit 3"}},
			running: 2,
			want:    ending{ExitCode: 3, Reason: "Error", Message: `{"exitCode":3,"results":{"version":"1.0"}}`, Phase: "Failed"},
		},
		"an init step under onError continue lets the next one start": {
			steps:   []step{{name: "probe", script: "exit 5", onError: "continue"}, {name: "report", script: "true"}},
			running: 0,
			want:    ending{Reason: "Completed", Message: `{"exitCode":5,"results":{}}`, Phase: "Running"},
		},
		"results past the message's limit: the wrapper's report of it": {
			steps:   []step{{name: "report", script: "result digest " + strings.Repeat("d", 4096) + "\nexit 2", onError: "continue"}},
			running: 0,
			want:    ending{Reason: "Completed", Message: `{"exitCode":2,"results":{},"resultsTooLarge":{"cut":false,"limit":4096,"size":4134}}`, Phase: "Succeeded"},
		},
		"a result with no value is empty": {
			steps:   []step{{name: "report", script: "result version"}},
			running: 0,
			want:    ending{Reason: "Completed", Message: `{"exitCode":0,"results":{"version":""}}`, Phase: "Succeeded"},
		},
		"docs/local-cluster.md's sample: a shell function named result is no result": {
			steps: []step{
				{name: "probe", script: "result() { printf '%s' \"$2\" > \"/minitask/results/$1\"; }\nresult version 1.4.2\nexit 3\n", onError: "continue"},
				{name: "build", script: "result() { printf '%s' \"$2\" > \"/minitask/results/$1\"; }\nresult digest \"sha256:4f1c\"\n"},
			},
			running: 1,
			want:    ending{Reason: "Completed", Message: `{"exitCode":0,"results":{"digest":"sha256:4f1c","version":"1.4.2"}}`, Phase: "Succeeded"},
		},
		"a timed step that ends first: as any step, its results read after the timer's arguments": {
			steps:   []step{{name: "report", script: "result digest d\nsleep 2\nexit 3", timeout: "60"}},
			running: 0,
			want:    ending{ExitCode: 3, Reason: "Error", Message: `{"exitCode":3,"results":{"digest":"d"}}`, Phase: "Failed"},
		},
		"a timed step past its timeout: 143, timedOut in the message": {
			steps:   []step{{name: "report", script: "result digest d\nsleep 90", timeout: "60"}},
			running: 0,
			want:    ending{ExitCode: 143, Reason: "Error", Message: `{"exitCode":143,"results":{"digest":"d"},"timedOut":true,"timeoutSeconds":60}`, Phase: "Failed"},
		},
		"a timed step past its timeout under onError continue: the next step starts": {
			steps:   []step{{name: "probe", script: "sleep 90", onError: "continue", timeout: "60"}, {name: "report", script: "true"}},
			running: 0,
			want:    ending{Reason: "Completed", Message: `{"exitCode":143,"results":{},"timedOut":true,"timeoutSeconds":60}`, Phase: "Running"},
		},
		"a Pod of an earlier release: the script is the command's": {
			steps:   []step{{name: "old", command: []string{"/bin/sh", "-c", "result version 1\nexit 4"}}},
			running: 0,
			want:    ending{ExitCode: 4, Reason: "Error", Phase: "Failed"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := podRunning(tc.steps, declared, tc.running, now)
			got := d.render(t, pod, "step-"+tc.steps[tc.running].name)
			if got != tc.want {
				t.Errorf("ending\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestStepDoneDelayReadsTheScript(t *testing.T) {
	d := loadStepDone(t)
	query, err := expression.NewQuery(d.delay)
	if err != nil {
		t.Fatalf("the delay's jq: %v", err)
	}
	one := func(s step) func(time.Time) map[string]any {
		return func(start time.Time) map[string]any { return podRunning([]step{s}, nil, 0, start) }
	}
	chain := []step{{name: "a", script: "true"}, {name: "b", script: "true"}, {name: "c", script: "sleep 4"}}
	chained := func(running int) func(time.Time) map[string]any {
		return func(start time.Time) map[string]any { return chainedRunning(chain, nil, running, start) }
	}
	tests := map[string]struct {
		pod func(start time.Time) map[string]any
		// want is when the running step ends, from when the Pod was taken up.
		want time.Duration
	}{
		"a script step's sleep, not the wrapper's":                 {one(step{name: "s", script: "echo hi\nsleep 4\nexit 0"}), 4 * time.Second},
		"a timed step's sleep, cut at its timeout":                 {one(step{name: "s", script: "sleep 90", timeout: "3"}), 3 * time.Second},
		"a timed step's sleep within its timeout":                  {one(step{name: "s", script: "sleep 2", timeout: "3"}), 2 * time.Second},
		"a script step without sleep: 1 s":                         {one(step{name: "s", script: "exit 3"}), time.Second},
		"a command step's sleep":                                   {one(step{name: "c", command: []string{"sh", "-c", "sleep 3"}}), 3 * time.Second},
		"a chained Pod's first step: from the Pod's start":         {chained(0), time.Second},
		"a chained Pod's step: from when the step before it ended": {chained(2), 2*time.Second + 4*time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now().Truncate(time.Second)
			out, err := query.Execute(context.Background(), tc.pod(start))
			if err != nil || len(out) != 1 {
				t.Fatalf("the delay's jq gave %v, %v", out, err)
			}
			ms, err := strconv.Atoi(strings.TrimSuffix(out[0].(string), "ms"))
			if err != nil {
				t.Fatalf("delay %q: %v", out[0], err)
			}
			left := tc.want - time.Since(start)
			if got := time.Duration(ms) * time.Millisecond; got < left-time.Second || got > left+time.Second {
				t.Errorf("delay = %s, want about %s", got, left)
			}
		})
	}
}

func TestStepDonePlaysChainedPods(t *testing.T) {
	d := loadStepDone(t)
	declared := []string{"version"}
	fetch := step{name: "fetch", script: "result version 1.0\nsleep 2"}
	build := step{name: "build", script: "exit 3"}
	report := step{name: "report", script: "true"}
	skipped := ending{Reason: "Completed", Message: `{"skipped":true}`}
	tests := map[string]struct {
		steps   []step
		running int
		// deadline is the Pod's activeDeadlineSeconds, run out if not 0.
		deadline  int
		wantPhase string
		want      map[string]ending
	}{
		"the first step ends, the later ones wait on": {
			steps:     []step{fetch, build, report},
			wantPhase: "Running",
			want:      map[string]ending{"step-fetch": {Reason: "Completed", Message: `{"exitCode":0,"results":{"version":"1.0"}}`}},
		},
		"a failing step: every later one ends skipped at once": {
			steps:     []step{fetch, build, report, {name: "notify", script: "true"}},
			running:   1,
			wantPhase: "Failed",
			want: map[string]ending{
				"step-fetch":  {Reason: "Completed"},
				"step-build":  {ExitCode: 3, Reason: "Error", Message: `{"exitCode":3,"results":{"version":"1.0"}}`},
				"step-report": skipped,
				"step-notify": skipped,
			},
		},
		"onError continue: the next step goes on": {
			steps:     []step{fetch, {name: "build", script: "exit 3", onError: "continue"}, report},
			running:   1,
			wantPhase: "Running",
			want: map[string]ending{
				"step-fetch": {Reason: "Completed"},
				"step-build": {Reason: "Completed", Message: `{"exitCode":3,"results":{"version":"1.0"}}`},
			},
		},
		"the last step ends the Pod": {
			steps:     []step{fetch, report},
			running:   1,
			wantPhase: "Succeeded",
			want: map[string]ending{
				"step-fetch":  {Reason: "Completed"},
				"step-report": {Reason: "Completed", Message: `{"exitCode":0,"results":{"version":"1.0"}}`},
			},
		},
		"the deadline kills the running step and the waiting ones": {
			steps:     []step{fetch, build, report},
			deadline:  1,
			wantPhase: "Failed",
			want: map[string]ending{
				"step-fetch":  {ExitCode: 137, Reason: "Error"},
				"step-build":  {ExitCode: 137, Reason: "Error"},
				"step-report": {ExitCode: 137, Reason: "Error"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			started := time.Now().Add(-10 * time.Second).Truncate(time.Second)
			pod := chainedRunning(tc.steps, declared, tc.running, started)
			if tc.deadline != 0 {
				pod["spec"].(map[string]any)["activeDeadlineSeconds"] = tc.deadline
			}
			phase, got, out := d.renderAll(t, pod)
			if phase != tc.wantPhase {
				t.Errorf("phase = %q, want %q; the patch: %s", phase, tc.wantPhase, out)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the containers ended (-want +got):\n%s", diff)
			}
		})
	}
}

// withSidecar returns pod, as JSON, with a native sidecar db first among
// its init containers, running since startedAt, as pod-accept starts it.
func withSidecar(pod map[string]any, startedAt time.Time) map[string]any {
	spec, status := pod["spec"].(map[string]any), pod["status"].(map[string]any)
	inits, _ := spec["initContainers"].([]any)
	spec["initContainers"] = append([]any{map[string]any{"name": "sidecar-db", "image": "postgres", "restartPolicy": "Always"}}, inits...)
	statuses, _ := status["initContainerStatuses"].([]any)
	status["initContainerStatuses"] = append([]any{map[string]any{"name": "sidecar-db", "ready": true, "started": true,
		"state": map[string]any{"running": map[string]any{"startedAt": startedAt.UTC().Format(time.RFC3339)}}}}, statuses...)
	return pod
}

// TestStepDonePlaysSidecars: a sidecar runs on while the steps end, and
// ends with the Pod: its last step, or a failing one; it is never taken
// for the running step, and the delay reads the step's script.
func TestStepDonePlaysSidecars(t *testing.T) {
	d := loadStepDone(t)
	fetch := step{name: "fetch", script: "sleep 2"}
	build := step{name: "build", script: "exit 3"}
	report := step{name: "report", script: "true"}
	stopped := ending{Reason: "Completed"}
	tests := map[string]struct {
		chained   bool
		steps     []step
		running   int
		wantPhase string
		want      map[string]ending
	}{
		"a step ends, the sidecar runs on": {steps: []step{fetch, report}, wantPhase: "Running",
			want: map[string]ending{"step-fetch": {Reason: "Completed", Message: `{"exitCode":0,"results":{}}`}}},
		"the last step ends the Pod and the sidecar": {steps: []step{fetch, report}, running: 1, wantPhase: "Succeeded",
			want: map[string]ending{"step-fetch": {Reason: "Completed"}, "step-report": {Reason: "Completed", Message: `{"exitCode":0,"results":{}}`}, "sidecar-db": stopped}},
		"a failing step ends the Pod and the sidecar": {steps: []step{build, report}, wantPhase: "Failed",
			want: map[string]ending{"step-build": {ExitCode: 3, Reason: "Error", Message: `{"exitCode":3,"results":{}}`}, "sidecar-db": stopped}},
		"chained: a step ends, the sidecar runs on": {chained: true, steps: []step{fetch, report}, wantPhase: "Running",
			want: map[string]ending{"step-fetch": {Reason: "Completed", Message: `{"exitCode":0,"results":{}}`}}},
		"chained: the last step ends the Pod and the sidecar": {chained: true, steps: []step{fetch, report}, running: 1, wantPhase: "Succeeded",
			want: map[string]ending{"step-fetch": {Reason: "Completed"}, "step-report": {Reason: "Completed", Message: `{"exitCode":0,"results":{}}`}, "sidecar-db": stopped}},
		"chained: a failing step skips the rest and ends the sidecar": {chained: true, steps: []step{build, report}, wantPhase: "Failed",
			want: map[string]ending{"step-build": {ExitCode: 3, Reason: "Error", Message: `{"exitCode":3,"results":{}}`},
				"step-report": {Reason: "Completed", Message: `{"skipped":true}`}, "sidecar-db": stopped}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			started := time.Now().Add(-10 * time.Second).Truncate(time.Second)
			// The sidecar started just now: were it taken for the running
			// step, the delay would be a second, not 0.
			pod := withSidecar(testPod(tc.steps, nil, tc.running, started, tc.chained), time.Now().Truncate(time.Second))
			phase, got, out := d.renderAll(t, pod)
			if phase != tc.wantPhase {
				t.Errorf("phase = %q, want %q; the patch: %s", phase, tc.wantPhase, out)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the containers ended (-want +got):\n%s", diff)
			}
			delay, err := expression.NewQuery(d.delay)
			if err != nil {
				t.Fatal(err)
			}
			results, err := delay.Execute(context.Background(), pod)
			if err != nil || len(results) != 1 {
				t.Fatalf("the delay's jq: %v, %v", results, err)
			}
			if s, _ := results[0].(string); s != "0ms" {
				t.Errorf("delay = %v, want 0ms: the running step, not the sidecar, started 10 s ago", results[0])
			}
		})
	}
}
