package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
)

// taskRunsShown is how many of a Task's newest runs its page lists.
const taskRunsShown = 20

// tasks lists the Tasks, read from the API server.
func (s *Server) tasks(w http.ResponseWriter, r *http.Request) {
	var list v1.TaskList
	if err := s.cfg.Client.List(r.Context(), &list, client.InNamespace(s.cfg.Namespace)); err != nil {
		s.fail(w, r, "listing Tasks", err)
		return
	}
	slices.SortFunc(list.Items, func(a, b v1.Task) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	s.pageOrFail(w, http.StatusOK, pages.PageTasks, pages.NewTasksPage(s.layout(r), list.Items, s.cfg.Namespace == ""))
}

// task is one Task, its start form, and its newest runs from the index.
func (s *Server) task(w http.ResponseWriter, r *http.Request) {
	task, ok := s.getTask(w, r)
	if !ok {
		return
	}
	var runs []*v1.TaskRun
	total := 0
	if s.index.Synced() {
		p := s.index.Query(runindex.Filter{Namespace: task.Namespace, Task: task.Name}, 1, taskRunsShown)
		runs, total = p.Runs, p.Total
	}
	s.pageOrFail(w, http.StatusOK, pages.PageTask, pages.NewTaskPage(s.layout(r), task, runs, total, s.cfg.Now()))
}

// getTask reads the Task the path names, or shows why it cannot.
func (s *Server) getTask(w http.ResponseWriter, r *http.Request) (*v1.Task, bool) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.inScope(ns) {
		s.outOfScope(w, r, ns)
		return nil, false
	}
	task := &v1.Task{}
	if err := s.cfg.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, task); err != nil {
		if apierrors.IsNotFound(err) {
			s.refuse(w, r, http.StatusNotFound, "No such Task",
				fmt.Sprintf("Task %q is not in namespace %q.", name, ns), "/tasks", "Back to the Tasks")
			return nil, false
		}
		s.fail(w, r, fmt.Sprintf("reading Task %q in namespace %q", name, ns), err)
		return nil, false
	}
	return task, true
}
