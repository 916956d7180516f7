package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestList(t *testing.T) {
	h := newHarness(t)
	h.history(t)

	tests := map[string]struct {
		args []string
		want result
	}{
		"newest first, with how each ended": {
			args: []string{"list"},
			want: result{Stdout: `NAME            TASK    STARTED   DURATION   STATUS
greet-new       greet   ---       ---        Pending
greet-running   greet   30s ago   ---        Running
lost-run        gone    5m ago    ---        WaitingForTask
greet-failed    greet   60m ago   12s        Failed(StepFailed)
greet-old       greet   3h ago    2m5s       Succeeded
`},
		},
		"the runs of one Task": {
			args: []string{"list", "greet"},
			want: result{Stdout: `NAME            TASK    STARTED   DURATION   STATUS
greet-new       greet   ---       ---        Pending
greet-running   greet   30s ago   ---        Running
greet-failed    greet   60m ago   12s        Failed(StepFailed)
greet-old       greet   3h ago    2m5s       Succeeded
`},
		},
		"names": {
			args: []string{"list", "greet", "-o", "name"},
			want: result{Stdout: `taskrun.minitask.dev/greet-new
taskrun.minitask.dev/greet-running
taskrun.minitask.dev/greet-failed
taskrun.minitask.dev/greet-old
`},
		},
		"a Task with no runs": {
			args: []string{"list", "quiet"},
			want: result{Stderr: "No runs of Task \"quiet\" in namespace \"NS\".\n"},
		},
		"an unknown Task": {
			args: []string{"list", "nope"},
			want: result{Code: 1, Stderr: `error: Task "nope" not found in namespace "NS"; list the Tasks there with: kubectl get tasks.minitask.dev -n NS` + "\n"},
		},
		"an unknown output format": {
			args: []string{"list", "-o", "wide"},
			want: result{Code: 2, Stderr: `error: unknown output format "wide"; use -o json, -o yaml or -o name; see 'kubectl task list --help'` + "\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}

	t.Run("json and yaml", func(t *testing.T) {
		for _, format := range []string{"json", "yaml"} {
			got := h.kubectlTask(t, "list", "greet", "-o", format)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("list -o %s: %+v", format, got)
			}
			var list struct {
				APIVersion, Kind string
				Items            []struct {
					APIVersion, Kind string
					Metadata         struct{ Name string }
					Status           struct{ Conditions []struct{ Reason string } }
				}
			}
			data := []byte(got.Stdout)
			if format == "yaml" {
				var err error
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatalf("list -o yaml printed no YAML: %v\n%s", err, got.Stdout)
				}
			}
			if err := json.Unmarshal(data, &list); err != nil {
				t.Fatalf("list -o %s printed no JSON: %v\n%s", format, err, got.Stdout)
			}
			var items []string
			for _, it := range list.Items {
				reason := ""
				if len(it.Status.Conditions) > 0 {
					reason = it.Status.Conditions[0].Reason
				}
				items = append(items, strings.Join([]string{it.APIVersion, it.Kind, it.Metadata.Name, reason}, " "))
			}
			want := []string{
				"minitask.dev/v1 TaskRun greet-new ",
				"minitask.dev/v1 TaskRun greet-running Running",
				"minitask.dev/v1 TaskRun greet-failed StepFailed",
				"minitask.dev/v1 TaskRun greet-old Succeeded",
			}
			if diff := cmp.Diff("minitask.dev/v1 TaskRunList", list.APIVersion+" "+list.Kind); diff != "" {
				t.Errorf("list -o %s kind (-want +got):\n%s", format, diff)
			}
			if diff := cmp.Diff(want, items); diff != "" {
				t.Errorf("list -o %s items (-want +got):\n%s", format, diff)
			}
		}
	})

	t.Run("all namespaces", func(t *testing.T) {
		got := h.kubectlTask(t, "list", "-A")
		lines := strings.Split(got.Stdout, "\n")
		if got.Code != 0 || !strings.HasPrefix(strings.Join(strings.Fields(lines[0]), " "), "NAMESPACE NAME TASK") {
			t.Fatalf("list -A: %+v", got)
		}
		// Other tests' namespaces may hold runs too; this one's come in order.
		var ours []string
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "NS" {
				ours = append(ours, f[1])
			}
		}
		want := []string{"greet-new", "greet-running", "lost-run", "greet-failed", "greet-old"}
		if diff := cmp.Diff(want, ours); diff != "" {
			t.Errorf("list -A, this namespace's runs (-want +got):\n%s", diff)
		}
	})
}

// TestListSelector checks list -l, a label selector as kubectl takes it.
func TestListSelector(t *testing.T) {
	h := newHarness(t)
	h.release3History(t)

	tests := map[string]struct {
		args []string
		want result
	}{
		"equality": {
			args: []string{"list", "-l", "team=platform", "-o", "name"},
			want: result{Stdout: "taskrun.minitask.dev/build-team\ntaskrun.minitask.dev/build-full\n"},
		},
		"a set and equality together": {
			args: []string{"list", "--selector", "team in (platform,web),tier=nightly", "-o", "name"},
			want: result{Stdout: "taskrun.minitask.dev/build-full\n"},
		},
		"the runs without a label": {
			args: []string{"list", "build", "-l", "!team", "-o", "name"},
			want: result{Stdout: "taskrun.minitask.dev/build-plain\n"},
		},
		"no run matches": {
			args: []string{"list", "build", "-l", "team=web"},
			want: result{Stderr: "No runs of Task \"build\" matching -l team=web in namespace \"NS\".\n"},
		},
		"a malformed selector": {
			args: []string{"list", "-l", "team in platform"},
			want: result{Code: 2, Stderr: `error: malformed -l "team in platform": unable to parse requirement: found 'platform' expected: '('; see 'kubectl task list --help'` + "\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}
