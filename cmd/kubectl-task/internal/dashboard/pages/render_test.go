package pages

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// payload is markup that would run script if a page wrote it as it is.
const payload = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

// tags finds the tags a page opens, by name.
var tags = regexp.MustCompile(`<(script|img)\b[^>]*>`)

// TestEveryValueIsEscaped renders every page and fragment with markup in
// every value the cluster gives (descriptions, params, messages, results,
// Events, YAML, scripts) and finds no tag but the page's own script.
func TestEveryValueIsEscaped(t *testing.T) {
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	task := wrappers.Task("ns", "greet").Description(payload).
		Params(v1.ParamSpec{Name: "p", Description: payload, Default: v1.NewStringValue(payload)},
			v1.ParamSpec{Name: "a", Type: v1.ParamTypeArray, Default: v1.NewArrayValue(payload)},
			v1.ParamSpec{Name: "o", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"k": {}},
				Default: v1.NewObjectValue(map[string]string{"k": payload})}).
		Workspaces(v1.WorkspaceDeclaration{Name: "w", Description: payload}).
		Step("say", "alpine:3", payload).Obj()
	task.Spec.Results = []v1.ResultDeclaration{{Name: "r", Description: payload}}
	task.Spec.Steps[0].Env = []corev1.EnvVar{{Name: "E", Value: payload}}
	run := wrappers.TaskRun("ns", "greet-1", "greet").Label("team", "web").
		Params(v1.Param{Name: "p", Value: *v1.NewStringValue(payload)}, v1.Param{Name: "a", Value: *v1.NewArrayValue(payload, payload)}).
		Conditions(metav1.Condition{Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "StepFailed", Message: payload}).
		StepStates(v1.StepState{Name: "say", State: v1.StepTerminated, ExitCode: ptr.To[int32](3), Reason: payload}).Obj()
	run.Status.Results = []v1.RunResult{{Name: "r", Value: ptr.To(payload)}}
	run.Status.Sidecars = []v1.SidecarState{{Name: "db", State: v1.StepWaiting, Reason: payload}}
	run.Status.Attempts = []v1.Attempt{{PodName: "greet-1-pod", Reason: "PodFailed", Message: payload}}
	run.Spec.PodTemplate = &v1.PodTemplate{PriorityClassName: payload}
	events := []corev1.Event{{Type: "Warning", Reason: payload, Message: payload, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "greet-1-pod"}}}
	l := Layout{Scope: payload, Cluster: payload, CSRF: payload, Flash: payload}
	filter, _ := runindex.ParseFilter(map[string][]string{"task": {payload}, "l": {"team=web"}})

	rendered := map[string]string{}
	page := func(name string, data any) {
		var b bytes.Buffer
		if err := r.Page(&b, name, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rendered[name] = b.String()
	}
	page(PageRuns, NewRunsPage(l, filter, runindex.Page{Runs: []*v1.TaskRun{run}, Total: 1, Number: 1, Pages: 1}, 50, true, []string{payload}, []string{payload}, now))
	page(PageRun, NewRunPage(l, run, task, payload, payload, events, "", now))
	page(PageTask, NewTaskPage(l, task, []*v1.TaskRun{run}, 1, now))
	page(PageTasks, NewTasksPage(l, []v1.Task{*task}, true))
	page(PageYAML, NewYAMLPage(l, "ns", "greet-1", []VersionYAML{{APIVersion: "minitask.dev/v1alpha1", YAML: "message: " + payload}, {APIVersion: "v", Error: payload}}))
	page(PageError, ErrorPage{Layout: l, Heading: payload, Message: payload, Hint: payload})
	for name, data := range map[string]any{FragmentRunRow: NewRunRow(run, now), FragmentRunLive: NewRunLive(run, task, payload, now), FragmentRunOutcome: NewRunLive(run, task, payload, now), FragmentRunEvents: NewRunEvents(events, payload, now)} {
		html, err := r.Fragment(name, data)
		if err != nil {
			t.Fatal(err)
		}
		rendered[name] = html
	}
	for name, html := range rendered {
		for _, tag := range tags.FindAllString(html, -1) {
			if tag != `<script src="/static/app.js" defer>` {
				t.Errorf("%s opens %s", name, tag)
			}
		}
		if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the payload as text:\n%s", name, html)
		}
	}
}

// TestRunPageSidecars: a run's page lists its sidecars, from
// status.sidecars, else from the spec it runs, and a log panel for each.
func TestRunPageSidecars(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	task := wrappers.Task("ns", "it").Sidecars(v1.Sidecar{Name: "db", Image: "postgres"}, v1.Sidecar{Name: "cache", Image: "redis"}).
		Step("test", "golang:1", "go test ./...").Obj()
	waiting := wrappers.TaskRun("ns", "it-1", "it").Obj()
	running := wrappers.TaskRun("ns", "it-2", "it").Obj()
	running.Status.Sidecars = []v1.SidecarState{
		{Name: "db", State: v1.StepRunning, Ready: ptr.To(true)},
		{Name: "cache", State: v1.StepWaiting, Ready: ptr.To(false), RestartCount: ptr.To[int32](2), Reason: "CrashLoopBackOff"},
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		want []SidecarRow
	}{
		"from the Task, before the Pod": {waiting, []SidecarRow{
			{Name: "db", State: "Not started", Ready: "no", Restarts: "0", Reason: none, Tone: ToneWaiting},
			{Name: "cache", State: "Not started", Ready: "no", Restarts: "0", Reason: none, Tone: ToneWaiting}}},
		"from status.sidecars": {running, []SidecarRow{
			{Name: "db", State: "Running", Ready: "yes", Restarts: "0", Reason: none, Tone: ToneOK},
			{Name: "cache", State: "Waiting", Ready: "no", Restarts: "2", Reason: "CrashLoopBackOff", Tone: ToneFailed}}},
	}
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			page := NewRunPage(Layout{}, tc.run, task, "", "", nil, "", now)
			if diff := cmp.Diff(tc.want, page.Live.Sidecars); diff != "" {
				t.Errorf("sidecars (-want +got):\n%s", diff)
			}
			var b bytes.Buffer
			if err := r.Page(&b, PageRun, page); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`id="sidecar-db"`, `id="log-sidecar.db"`, `id="log-sidecar.cache"`, `>sidecar cache</h3>`} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the run's page lacks %s", want)
				}
			}
		})
	}
}

func TestNewRunRow(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-90 * time.Second))
	condition := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: reason, Message: message}
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		want RunRow
	}{
		"not seen by the controller yet": {
			run:  wrappers.TaskRun("ns", "r", "t").Obj(),
			want: RunRow{Status: "Pending", Tone: ToneWaiting, Started: Time{Ago: none}, Duration: none},
		},
		"running, with retries": {
			run: func() *v1.TaskRun {
				r := wrappers.TaskRun("ns", "r", "t").Started(started).Conditions(condition(metav1.ConditionUnknown, "Running", "running step \"a\" (1 of 2)")).Obj()
				r.Spec.Retries = ptr.To[int32](2)
				r.Status.Attempts = []v1.Attempt{{}}
				return r
			}(),
			want: RunRow{Status: "Running", Tone: ToneGoingOn, Message: `running step "a" (1 of 2)`,
				Started: Time{Ago: "90s ago", ISO: "2026-01-01T11:58:30Z"}, Duration: "90s so far", Attempt: "2 of 3"},
		},
		"failed, its message on one line": {
			run: wrappers.TaskRun("ns", "r", "t").Started(started).Completed(metav1.NewTime(now.Add(-30 * time.Second))).
				Conditions(condition(metav1.ConditionFalse, "StepFailed", "step \"a\"\nexited with code 3")).Obj(),
			want: RunRow{Status: "Failed(StepFailed)", Tone: ToneFailed, Message: `step "a" exited with code 3`,
				Started: Time{Ago: "90s ago", ISO: "2026-01-01T11:58:30Z"}, Duration: "60s"},
		},
		"succeeded: no message": {
			run: wrappers.TaskRun("ns", "r", "t").Started(started).Completed(metav1.NewTime(now)).
				Conditions(condition(metav1.ConditionTrue, "Succeeded", "every step exited 0")).Obj(),
			want: RunRow{Status: "Succeeded", Tone: ToneOK, Started: Time{Ago: "90s ago", ISO: "2026-01-01T11:58:30Z"}, Duration: "90s"},
		},
		"cancel asked for": {
			run:  wrappers.TaskRun("ns", "r", "t").Started(started).Cancelled().Conditions(condition(metav1.ConditionUnknown, "Running", "")).Obj(),
			want: RunRow{Status: "Cancelling", Tone: ToneGoingOn, Started: Time{Ago: "90s ago", ISO: "2026-01-01T11:58:30Z"}, Duration: "90s so far"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := NewRunRow(tc.run, now)
			// The names and links are the same in every case.
			got.ID, got.Namespace, got.Name, got.URL, got.Task, got.TaskURL, got.Order = "", "", "", "", "", "", ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewRunRow (-want +got):\n%s", diff)
			}
		})
	}
}
