package dashboard_test

import (
	"html"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/fixtures"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var podShapeFact = regexp.MustCompile(`<dt>Pod shape</dt><dd>([^<]*)</dd>`)

// TestRunPagePodShape shows, beside the run's Pod, which shape the Pod got
// and why, as describe does, from Pods as the controller builds them.
func TestRunPagePodShape(t *testing.T) {
	s := serve(t, "")
	reader := serve(t, "reader")
	reader.Grant(t, "reader", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list", "watch"}})

	scripts := wrappers.Task("", "greet").Step("prepare", "alpine:3", "echo preparing").Step("say", "alpine:3", "echo hi").Obj()
	command := wrappers.Task("", "greet-command").Steps(v1.Step{Name: "prepare", Image: "alpine:3", Command: []string{"echo", "preparing"}}).
		Step("say", "alpine:3", "echo hi").Obj()
	// started creates, in h's namespace, a run of task named name, and,
	// unless podGone, its Pod as the controller builds it, chained if asked.
	started := func(h *served, name string, task *v1.Task, chained, podGone bool) {
		t.Helper()
		run := wrappers.TaskRun("", name, task.Name).Obj()
		h.Create(t, run)
		h.UpdateTaskRunStatus(t, name, func(run *v1.TaskRun) { run.Status.PodName = name + "-pod" })
		if !podGone {
			h.Create(t, fixtures.RunPod(t, run, task, name+"-pod", chained))
		}
	}
	s.Create(t, scripts.DeepCopy(), command)
	started(s, "chained", scripts, true, false)
	started(s, "fallback", command, true, false)
	started(s, "default", scripts, false, false)
	started(s, "pod-gone", scripts, true, true)
	s.Create(t, wrappers.TaskRun("", "no-pod", "greet").Obj())
	reader.Create(t, scripts.DeepCopy())
	started(reader, "chained", scripts, true, false)

	tests := map[string]struct {
		h    *served
		run  string
		want []string
	}{
		"chained":                          {s, "chained", []string{"chained (every step a container that waits for the one before)"}},
		"chained asked for, and why not":   {s, "fallback", []string{`init containers (not chained: step "prepare" runs a command, not a script: its image may have no shell for the wait that chains steps)`}},
		"the default shape, no annotation": {s, "default", []string{"init containers"}},
		"a Pod that no longer exists":      {s, "pod-gone", []string{"not known: the Pod no longer exists"}},
		"no Pod yet: no shape":             {s, "no-pod", nil},
		"for someone who may not read Pods": {reader, "chained",
			[]string{`not known: the Pod cannot be read (pods "chained-pod" is forbidden: User "reader" cannot get resource "pods" in API group "" in the namespace "` + reader.NS + `")`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, page := tc.h.get(t, "/runs/"+tc.h.NS+"/"+tc.run)
			if code != http.StatusOK {
				t.Fatalf("%d\n%s", code, page)
			}
			var got []string
			for _, m := range podShapeFact.FindAllStringSubmatch(page, -1) {
				got = append(got, html.UnescapeString(m[1]))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the Pod shape on the page of %s (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}
