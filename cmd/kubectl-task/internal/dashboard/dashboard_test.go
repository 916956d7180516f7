package dashboard_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var rowName = regexp.MustCompile(`<tr id="run/[^/]+/([^"]+)"`)

// rows are the names of the runs a runs page lists, in order.
func rows(page string) []string {
	var names []string
	for _, m := range rowName.FindAllStringSubmatch(page, -1) {
		names = append(names, m[1])
	}
	return names
}

// started writes a run's start time, as the controller would.
func (s *served) started(t *testing.T, name string, at time.Time) {
	t.Helper()
	s.UpdateTaskRunStatus(t, name, func(run *v1.TaskRun) { run.Status.StartTime = &metav1.Time{Time: at} })
}

// TestRunsPage lists the runs the API server holds, newest first by start,
// a page at a time, filtered, from the index the dashboard keeps.
func TestRunsPage(t *testing.T) {
	s := serve(t, "")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		task := "build"
		if name == "c" {
			task = "test"
		}
		s.Create(t, wrappers.TaskRun("", name, task).Label("n", name).Obj())
		s.started(t, name, base.Add(time.Duration(i)*time.Minute))
	}
	tests := map[string]struct {
		query string
		want  []string
	}{
		"the first page":      {"", []string{"e", "d", "c"}},
		"the second page":     {"page=2", []string{"b", "a"}},
		"a page past the end": {"page=9", []string{"b", "a"}},
		"a Task":              {"task=build", []string{"e", "d", "b"}},
		"a label":             {"l=n+in+(a,c)", []string{"c", "a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			eventually(t, "the runs page", func() (bool, string) {
				code, page := s.get(t, "/runs?"+tc.query)
				got := rows(page)
				return code == http.StatusOK && cmp.Equal(tc.want, got), cmp.Diff(tc.want, got)
			})
		})
	}
	if code, page := s.get(t, "/runs?status=finished"); code != http.StatusBadRequest || !strings.Contains(page, "unknown status") {
		t.Errorf("a malformed filter: %d\n%s", code, page)
	}
}

// event is one server-sent event.
type event struct{ name, data string }

// follow reads the server-sent events of path, from now on.
func (s *served) follow(t *testing.T, path string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+path, nil)
	res, err := http.DefaultClient.Do(req) //nolint:bodyclose // the goroutine below reads and closes it
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, res.Status)
	}
	events := make(chan event, 100)
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				events <- ev
				ev = event{}
			}
		}
	}()
	return events
}

// next returns the next event named name, skipping others.
func next(t *testing.T, events <-chan event, name string) event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 10s", name)
		}
	}
}

// TestLiveRuns follows the runs page's stream: a new run, its status
// written, and its deletion, each as it happens.
func TestLiveRuns(t *testing.T) {
	s := serve(t, "")
	s.Create(t, wrappers.TaskRun("", "before", "build").Obj())
	eventually(t, "the index to hold the run", func() (bool, string) {
		_, page := s.get(t, "/runs")
		return len(rows(page)) == 1, page
	})
	events := s.follow(t, "/live/runs?task=build")
	s.Create(t, wrappers.TaskRun("", "other-task", "test").Obj(), wrappers.TaskRun("", "new", "build").Obj())
	if ev := next(t, events, "new"); !strings.Contains(ev.data, `id="run/`+s.NS+`/new"`) || !strings.Contains(ev.data, "Pending") {
		t.Errorf("the new run's row: %s", ev.data)
	}
	s.UpdateTaskRunStatus(t, "before", func(run *v1.TaskRun) {
		run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: "Running",
			Message: "running step", LastTransitionTime: metav1.Now()}}
	})
	if ev := next(t, events, "run"); !strings.Contains(ev.data, `id="run/`+s.NS+`/before"`) || !strings.Contains(ev.data, "Running") {
		t.Errorf("the changed run's row: %s", ev.data)
	}
	if err := env.Client.Delete(context.Background(), wrappers.TaskRun(s.NS, "before", "build").Obj()); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events, "gone"); ev.data != "run/"+s.NS+"/before" {
		t.Errorf("the deleted run: %s", ev.data)
	}
}

// TestForbidden shows what the API server forbids as a page that says
// so, in its words: the runs, a run, the Tasks, and a run's Events.
func TestForbidden(t *testing.T) {
	s := serve(t, "nobody")
	for _, path := range []string{"/runs", "/runs/" + s.NS + "/x", "/tasks", "/tasks/" + s.NS + "/t", "/runs/" + s.NS + "/x/yaml"} {
		code, page := s.get(t, path)
		if code != http.StatusForbidden || !strings.Contains(page, "<h1>Forbidden</h1>") || !strings.Contains(page, `User &#34;nobody&#34; cannot`) {
			t.Errorf("%s: %d\n%s", path, code, page)
		}
	}

	reader := serve(t, "reader")
	reader.Grant(t, "reader", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list", "watch"}})
	reader.Create(t, wrappers.TaskRun("", "r", "t").Obj())
	code, page := reader.get(t, "/runs/"+reader.NS+"/r")
	if code != http.StatusOK || !strings.Contains(page, `Forbidden: events is forbidden: User &#34;reader&#34; cannot list resource &#34;events&#34;`) {
		t.Errorf("a run whose Events cannot be read: %d\n%s", code, page)
	}
}

// TestActions starts, cancels, reruns and deletes runs through the
// dashboard's forms, as its pages post them.
func TestActions(t *testing.T) {
	s := serve(t, "")
	s.Create(t, wrappers.Task("", "greet").Param("greeting").ParamDefault("name", "world").Workspace("src").Step("say", "alpine:3", "echo").Obj())
	ctx := context.Background()

	code, to, body := s.post(t, "/tasks/"+s.NS+"/greet/start", url.Values{"param.greeting": {"hi"}, "param.name": {"world"},
		"workspace.src": {"configmap:settings"}, "name": {"greet-1"}})
	if code != http.StatusSeeOther || to != "/runs/"+s.NS+"/greet-1?done=started" {
		t.Fatalf("start: %d to %q\n%s", code, to, body)
	}
	run := s.TaskRun(t, "greet-1")
	want := v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}, Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
		Workspaces: []v1.WorkspaceBinding{{Name: "src", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}}
	if diff := cmp.Diff(want, run.Spec); diff != "" {
		t.Errorf("the started run's spec, the default left out (-want +got):\n%s", diff)
	}
	if code, _, body := s.post(t, "/tasks/"+s.NS+"/greet/start", url.Values{}); code != http.StatusBadRequest || !strings.Contains(body, "needs a value for greeting") {
		t.Errorf("start without a required param: %d\n%s", code, body)
	}
	if code, _, body := s.post(t, "/tasks/"+s.NS+"/greet/start", url.Values{"param.greeting": {"hi"}, "workspace.src": {"hostPath:/"}}); code != http.StatusBadRequest || !strings.Contains(body, "unknown source") {
		t.Errorf("start with a malformed workspace: %d\n%s", code, body)
	}

	if code, to, body := s.post(t, "/runs/"+s.NS+"/greet-1/cancel", url.Values{}); code != http.StatusSeeOther || to != "/runs/"+s.NS+"/greet-1?done=cancelled" {
		t.Fatalf("cancel: %d to %q\n%s", code, to, body)
	}
	if got := s.TaskRun(t, "greet-1").Spec.Status; got != v1.TaskRunSpecStatusCancelled {
		t.Errorf("after cancel, spec.status is %q", got)
	}

	code, to, body = s.post(t, "/runs/"+s.NS+"/greet-1/rerun", url.Values{})
	if code != http.StatusSeeOther || !strings.HasPrefix(to, "/runs/"+s.NS+"/greet-") || !strings.HasSuffix(to, "?done=rerun&from=greet-1") {
		t.Fatalf("rerun: %d to %q\n%s", code, to, body)
	}
	again := s.TaskRun(t, strings.TrimPrefix(strings.Split(to, "?")[0], "/runs/"+s.NS+"/"))
	want.Status = ""
	if diff := cmp.Diff(want, again.Spec); diff != "" {
		t.Errorf("the rerun's spec: greet-1's, not cancelled (-want +got):\n%s", diff)
	}

	s.UpdateTaskRunStatus(t, "greet-1", func(run *v1.TaskRun) {
		run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "TaskRunCancelled", LastTransitionTime: metav1.Now()}}
	})
	if code, _, body := s.post(t, "/runs/"+s.NS+"/greet-1/cancel", url.Values{}); code != http.StatusConflict || !strings.Contains(body, "has already finished") {
		t.Errorf("cancel of a finished run: %d\n%s", code, body)
	}

	if code, to, body := s.post(t, "/runs/"+s.NS+"/greet-1/delete", url.Values{}); code != http.StatusSeeOther || to != "/runs?done=deleted&run=greet-1" {
		t.Fatalf("delete: %d to %q\n%s", code, to, body)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.NS, Name: "greet-1"}, &v1.TaskRun{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
	if code, _, _ := s.post(t, "/runs/other-namespace/x/cancel", url.Values{}); code != http.StatusNotFound {
		t.Errorf("an action in a namespace the dashboard does not show: %d, want 404", code)
	}
}

// TestReadOnly refuses every action, and shows no button.
func TestReadOnly(t *testing.T) {
	s := serve(t, "", func(c *dashboard.Config) { c.ReadOnly = true })
	s.Create(t, wrappers.Task("", "greet").Step("say", "alpine:3", "echo").Obj(), wrappers.TaskRun("", "r", "greet").Obj())
	for _, path := range []string{"/runs/" + s.NS + "/r/cancel", "/runs/" + s.NS + "/r/rerun", "/runs/" + s.NS + "/r/delete", "/tasks/" + s.NS + "/greet/start"} {
		if code, _, body := s.post(t, path, url.Values{}); code != http.StatusForbidden || !strings.Contains(body, "--read-only") {
			t.Errorf("POST %s: %d\n%s", path, code, body)
		}
	}
	if run := s.TaskRun(t, "r"); run.Spec.Status != "" {
		t.Errorf("a read-only dashboard changed the run: %+v", run.Spec)
	}
	if names := s.TaskRunNames(t); len(names) != 1 {
		t.Errorf("a read-only dashboard started runs: %v", names)
	}
	for _, path := range []string{"/runs/" + s.NS + "/r", "/tasks/" + s.NS + "/greet"} {
		if _, page := s.get(t, path); strings.Contains(page, `method="post"`) {
			t.Errorf("%s shows a form that posts", path)
		}
	}
}

// TestYAMLInEveryVersion shows a v1 run as v1beta1 and v1alpha1 serve it,
// converted by the webhook, beside v1, without managedFields.
func TestYAMLInEveryVersion(t *testing.T) {
	s := serve(t, "")
	s.Create(t, wrappers.TaskRun("", "r", "greet").Param("greeting", "hi").Obj())
	code, page := s.get(t, "/runs/"+s.NS+"/r/yaml")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, page)
	}
	for _, want := range []string{"apiVersion: minitask.dev/v1alpha1", "taskRef: greet\n", "minitask.dev/conversion-data:",
		"apiVersion: minitask.dev/v1beta1", "taskRef:\n    name: greet", "- name: greeting\n    value: hi",
		"apiVersion: minitask.dev/v1\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in:\n%s", want, page)
		}
	}
	if strings.Contains(page, "managedFields:") {
		t.Error("the YAML shows managedFields")
	}
}

// TestSecretsNeverRead visits every page and stream of a run whose Task
// takes a Secret's key as env and whose run binds a Secret as a workspace:
// the dashboard names the Secrets, and never asks the API server for one.
func TestSecretsNeverRead(t *testing.T) {
	s := serve(t, "")
	task := wrappers.Task("", "deploy").Workspace("creds").Step("push", "alpine:3", "echo").Obj()
	task.Spec.Steps[0].Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "registry"}, Key: "token"}}}}
	s.Create(t, task, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git"}, StringData: map[string]string{"token": "s3cret"}},
		wrappers.TaskRun("", "r", "deploy").Workspace(v1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "git"}}).Obj())
	pages := map[string]string{}
	for _, path := range []string{"/runs", "/runs/" + s.NS + "/r", "/runs/" + s.NS + "/r/yaml", "/runs/" + s.NS + "/r/log.txt", "/tasks", "/tasks/" + s.NS + "/deploy"} {
		_, pages[path] = s.get(t, path)
	}
	events := s.follow(t, "/runs/"+s.NS+"/r/live")
	next(t, events, "live")
	if !strings.Contains(pages["/runs/"+s.NS+"/r"], "secret:git") || !strings.Contains(pages["/tasks/"+s.NS+"/deploy"], "TOKEN from Secret registry, key token") {
		t.Error("the pages do not name the Secrets")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.paths {
		if strings.Contains(p, "/secrets") {
			t.Errorf("the dashboard asked for a Secret: %s", p)
		}
	}
	for path, page := range pages {
		if strings.Contains(page, "s3cret") {
			t.Errorf("%s shows the Secret's value", path)
		}
	}
}
