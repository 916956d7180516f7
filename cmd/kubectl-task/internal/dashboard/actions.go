package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/paramtext"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runops"
)

// This file holds the actions: each a POST that the guard has let through
// (its Origin and token checked), done with runops as the commands do it,
// then a redirect to the page that shows what it did.

// action refuses every action of a read-only dashboard.
func (s *Server) action(do http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.ReadOnly {
			s.refuse(w, r, http.StatusForbidden, "Read-only", "This dashboard was started with --read-only: it changes nothing.", "", "")
			return
		}
		if !s.inScope(r.PathValue("ns")) {
			s.outOfScope(w, r, r.PathValue("ns"))
			return
		}
		do(w, r)
	}
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	back := pages.RunPath(ns, name)
	already, err := runops.Cancel(r.Context(), s.cfg.Client, ns, name)
	var finished *runops.FinishedError
	switch {
	case errors.As(err, &finished):
		s.refuse(w, r, http.StatusConflict, "Nothing to cancel", finished.Error()+".", back, "Back to the run")
		return
	case apierrors.IsConflict(err):
		s.refuse(w, r, http.StatusConflict, "Not cancelled", fmt.Sprintf("TaskRun %q kept changing while cancelling it; try again.", name), back, "Back to the run")
		return
	case err != nil:
		s.fail(w, r, fmt.Sprintf("cancelling TaskRun %q", name), err)
		return
	}
	done := "cancelled"
	if already {
		done = "already-cancelling"
	}
	redirectDone(w, r, back, done, nil)
}

func (s *Server) rerun(w http.ResponseWriter, r *http.Request) {
	earlier, ok := s.getRun(w, r)
	if !ok {
		return
	}
	back := pages.RunPath(earlier.Namespace, earlier.Name)
	task, note := s.taskOf(r.Context(), earlier)
	if task == nil {
		s.refuse(w, r, http.StatusConflict, "Cannot rerun", note+": a new run would wait for it.", back, "Back to the run")
		return
	}
	run, err := runops.RerunOf(earlier, task, "")
	var missing *runops.MissingParamsError
	if errors.As(err, &missing) {
		s.refuse(w, r, http.StatusConflict, "Cannot rerun",
			fmt.Sprintf("Task %q now needs a value for %s, which TaskRun %s does not give: start it from its page instead.",
				task.Name, strings.Join(missing.Missing, ", "), earlier.Name), pages.TaskPath(task.Namespace, task.Name), "Start it from the Task's page")
		return
	}
	var wrong *runops.WrongTypeParamsError
	if errors.As(err, &wrong) {
		s.refuse(w, r, http.StatusConflict, "Cannot rerun",
			fmt.Sprintf("Task %q now declares params of other types than TaskRun %s's values (%s): start it from its page instead.",
				task.Name, earlier.Name, strings.Join(wrong.Problems, "; ")), pages.TaskPath(task.Namespace, task.Name), "Start it from the Task's page")
		return
	}
	if err := runops.Create(r.Context(), s.cfg.Client, run); err != nil {
		s.fail(w, r, fmt.Sprintf("starting TaskRun %s again", earlier.Name), err)
		return
	}
	redirectDone(w, r, pages.RunPath(run.Namespace, run.Name), "rerun", url.Values{"from": {earlier.Name}})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	run, ok := s.getRun(w, r)
	if !ok {
		return
	}
	err := runops.Delete(r.Context(), s.cfg.Client, run, false)
	if err != nil && !apierrors.IsNotFound(err) {
		s.fail(w, r, fmt.Sprintf("deleting TaskRun %q", run.Name), err)
		return
	}
	redirectDone(w, r, "/runs", "deleted", url.Values{"run": {run.Name}})
}

// start starts a run of a Task with the start form's params and workspaces.
// A field left at the param's default is left out, so that the run reads
// the default as the Task's, as start does without -p.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	task, ok := s.getTask(w, r)
	if !ok {
		return
	}
	back := pages.TaskPath(task.Namespace, task.Name)
	run := &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: task.Namespace, Name: strings.TrimSpace(r.PostFormValue("name"))},
		Spec:       v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: task.Name}},
	}
	for _, p := range task.Spec.Params {
		value, given := r.PostForm[pages.ParamField(p.Name)]
		if !given || (p.Default != nil && value[0] == paramtext.Text(*p.Default)) || (p.Default == nil && value[0] == "") {
			continue
		}
		v, err := paramtext.Parse(p, value[0])
		if err != nil {
			s.refuse(w, r, http.StatusBadRequest, "Malformed param",
				fmt.Sprintf("Param %s is %s: %s. Give %s.", p.Name, paramtext.TypeName(p), err, paramtext.Syntax(p)), back, "Back to the Task")
			return
		}
		run.Spec.Params = append(run.Spec.Params, v1.Param{Name: p.Name, Value: v})
	}
	for _, ws := range task.Spec.Workspaces {
		source := strings.TrimSpace(r.PostFormValue(pages.WorkspaceField(ws.Name)))
		if source == "" {
			continue
		}
		b, err := runinfo.ParseWorkspaceSource(ws.Name, source)
		if err != nil {
			s.refuse(w, r, http.StatusBadRequest, "Malformed workspace", fmt.Sprintf("Workspace %s: %s.", ws.Name, err), back, "Back to the Task")
			return
		}
		run.Spec.Workspaces = append(run.Spec.Workspaces, b)
	}
	if missing := runops.MissingParams(task, run.Spec.Params); len(missing) > 0 {
		s.refuse(w, r, http.StatusBadRequest, "Missing params",
			fmt.Sprintf("Task %q needs a value for %s; nothing was started.", task.Name, strings.Join(missing, ", ")), back, "Back to the Task")
		return
	}
	if err := runops.Create(r.Context(), s.cfg.Client, run); err != nil {
		if apierrors.IsAlreadyExists(err) {
			s.refuse(w, r, http.StatusConflict, "Name taken", fmt.Sprintf("TaskRun %q already exists; choose another name, or leave it empty.", run.Name), back, "Back to the Task")
			return
		}
		s.fail(w, r, fmt.Sprintf("starting a run of Task %q", task.Name), err)
		return
	}
	redirectDone(w, r, pages.RunPath(run.Namespace, run.Name), "started", nil)
}
