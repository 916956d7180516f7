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
}

// wrapperArgs stands for the controller's wrapper text: the stage must never
// read it, only the arguments after it.
const wrapperArgs = "'/bin/sh' -c \"$1\"\ncode=$?\nsleep 99\nexit 42\n"

// podRunning returns a Pod, as JSON, whose step running runs, the steps
// before it completed, for a Task whose results are declared.
func podRunning(steps []step, declared []string, running int, startedAt time.Time) map[string]any {
	var containers []map[string]any
	var statuses []map[string]any
	for i, s := range steps {
		command := s.command
		if s.script != "" {
			onError := s.onError
			if onError == "" {
				onError = "stopAndFail"
			}
			command = append([]string{"/bin/sh", "-c", wrapperArgs, "minitask-step", s.script, onError, "4096"}, declared...)
		}
		containers = append(containers, map[string]any{"name": "step-" + s.name, "image": "alpine:3", "command": command})
		state := map[string]any{"waiting": map[string]any{"reason": "PodInitializing"}}
		switch {
		case i < running:
			state = map[string]any{"terminated": map[string]any{"exitCode": 0, "reason": "Completed"}}
		case i == running:
			state = map[string]any{"running": map[string]any{"startedAt": startedAt.UTC().Format(time.RFC3339)}}
		}
		statuses = append(statuses, map[string]any{"name": "step-" + s.name, "state": state})
	}
	last := len(steps) - 1
	phase := "Pending"
	if running == last {
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
	for _, cs := range append(status.Init, status.Container...) {
		if cs.Name == container && cs.State.Terminated != nil {
			term := cs.State.Terminated
			return ending{ExitCode: term.ExitCode, Reason: term.Reason, Message: term.Message, Phase: status.Phase}
		}
	}
	t.Fatalf("the rendered status ends no container %s: %s", container, out)
	return ending{}
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
	tests := map[string]struct {
		step step
		want time.Duration
	}{
		"a script step's sleep, not the wrapper's": {step{name: "s", script: "echo hi\nsleep 4\nexit 0"}, 4 * time.Second},
		"a script step without sleep: 1 s":         {step{name: "s", script: "exit 3"}, time.Second},
		"a command step's sleep":                   {step{name: "c", command: []string{"sh", "-c", "sleep 3"}}, 3 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now().Truncate(time.Second)
			out, err := query.Execute(context.Background(), podRunning([]step{tc.step}, nil, 0, start))
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
