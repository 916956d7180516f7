package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/live"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// run is one run in detail, read from the API server.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	run, ok := s.getRun(w, r)
	if !ok {
		return
	}
	task, taskNote := s.taskOf(r.Context(), run)
	events, eventsNote := s.events(r.Context(), run)
	page := pages.NewRunPage(s.layout(r), run, task, taskNote, s.podShape(r.Context(), run), events, eventsNote, s.cfg.Now())
	s.pageOrFail(w, http.StatusOK, pages.PageRun, page)
}

// liveRun streams a run's changes and its steps' logs.
func (s *Server) liveRun(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.inScope(ns) {
		http.NotFound(w, r)
		return
	}
	stream, err := live.Open(w)
	if err != nil {
		return
	}
	defer stream.Close()
	ctx := r.Context()
	runs := watchRun(ctx, s.cfg.Client, ns, name)
	_ = live.ServeRun(ctx, stream, runs, s.cfg.LogSource(ns, name), runView{s})
}

// runLog is the run's step logs as text, as kubectl task logs prints them.
func (s *Server) runLog(w http.ResponseWriter, r *http.Request) {
	run, ok := s.getRun(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	printed, err := runlogs.Stream(r.Context(), s.cfg.LogSource(run.Namespace, run.Name), w, runlogs.Options{})
	switch {
	case err != nil:
		fmt.Fprintf(w, "\n(the logs stopped: %s)\n", oneLine(err.Error()))
	case printed == 0:
		fmt.Fprintf(w, "TaskRun %s has not started a step yet.\n", run.Name)
	}
}

// getRun reads the run the path names, or shows why it cannot.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) (*v1.TaskRun, bool) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.inScope(ns) {
		s.outOfScope(w, r, ns)
		return nil, false
	}
	run := &v1.TaskRun{}
	if err := s.cfg.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		if apierrors.IsNotFound(err) {
			s.refuse(w, r, http.StatusNotFound, "No such run",
				fmt.Sprintf("TaskRun %q is not in namespace %q: it may have been deleted.", name, ns), "/runs", "Back to the runs")
			return nil, false
		}
		s.fail(w, r, fmt.Sprintf("reading TaskRun %q in namespace %q", name, ns), err)
		return nil, false
	}
	return run, true
}

// taskOf reads run's Task, or says why it cannot: a Task deleted since the
// run started is no reason to show nothing.
func (s *Server) taskOf(ctx context.Context, run *v1.TaskRun) (*v1.Task, string) {
	task := &v1.Task{}
	err := s.cfg.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.TaskRef.Name}, task)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("Task %q does not exist", run.Spec.TaskRef.Name)
	case err != nil:
		return nil, fmt.Sprintf("Task %q cannot be read (%s)", run.Spec.TaskRef.Name, apiMessage(err))
	}
	return task, ""
}

// events reads the run's Events; someone who may read runs but not Events
// still gets the run, and a note where the Events would be.
func (s *Server) events(ctx context.Context, run *v1.TaskRun) ([]corev1.Event, string) {
	events, err := runinfo.RunEvents(ctx, s.cfg.Client, run)
	switch {
	case apierrors.IsForbidden(err):
		return nil, "Forbidden: " + apiMessage(err)
	case err != nil && !errors.Is(err, context.Canceled):
		return nil, "They cannot be listed: " + apiMessage(err)
	}
	return events, ""
}

// podShape says which shape run's Pod got, and why (runinfo.PodShape), or
// why that is not known: someone who may read runs but not Pods still gets
// the run. "" while the run has no Pod.
func (s *Server) podShape(ctx context.Context, run *v1.TaskRun) string {
	shape, gone, err := runinfo.RunPodShape(ctx, s.cfg.Client, run)
	switch {
	case gone:
		return "not known: the Pod no longer exists"
	case err != nil:
		return "not known: the Pod cannot be read (" + apiMessage(err) + ")"
	}
	return shape
}

// runView renders the live parts of a run's page.
type runView struct{ s *Server }

func (v runView) Live(run *v1.TaskRun) (string, error) {
	task, _ := v.s.taskOf(context.Background(), run)
	return v.s.render.Fragment(pages.FragmentRunLive, pages.NewRunLive(run, task, v.s.podShape(context.Background(), run), v.s.cfg.Now()))
}

func (v runView) Outcome(run *v1.TaskRun) (string, error) {
	task, _ := v.s.taskOf(context.Background(), run)
	// The outcome shows no Pod facts: no need to read the Pod.
	return v.s.render.Fragment(pages.FragmentRunOutcome, pages.NewRunLive(run, task, "", v.s.cfg.Now()))
}

func (v runView) Events(ctx context.Context, run *v1.TaskRun) (string, error) {
	events, note := v.s.events(ctx, run)
	return v.s.render.Fragment(pages.FragmentRunEvents, pages.NewRunEvents(events, note, v.s.cfg.Now()))
}
