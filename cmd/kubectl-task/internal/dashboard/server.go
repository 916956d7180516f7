// Package dashboard is kubectl task dashboard: a web server, run by the
// plugin on the user's machine with the user's kubeconfig, that shows runs
// and Tasks as they change and acts on them with the user's own rights. It
// needs no install in the cluster, so it has no rights of its own to guard:
// what it guards is the browser's way in (package security).
//
// Handlers stay thin: each reads objects from the API server (or the runs
// index, runindex) and hands them to a page (package pages); what changes is
// pushed to open pages by package live.
package dashboard

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/security"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// DefaultPageSize is how many runs a page of the runs list shows.
const DefaultPageSize = 50

// Config is what a dashboard shows, and with which clients.
type Config struct {
	// Client reads and writes Tasks and TaskRuns (v1; other versions
	// unstructured), Events, and watches runs.
	Client client.WithWatch
	// Kube reads Pod logs.
	Kube kubernetes.Interface
	// Namespace is the only namespace shown; empty shows every one.
	Namespace string
	// Cluster names the API server, for the pages' header.
	Cluster string
	// ReadOnly leaves out every action: cancel, rerun, start, delete.
	ReadOnly bool
	// LogSource returns where a run's step logs come from; nil means its
	// Pod, through the Pod logs API.
	LogSource func(ns, run string) runlogs.Source
	// Now is the pages' clock; nil means time.Now.
	Now func() time.Time
	// PageSize is how many runs a page lists; 0 means DefaultPageSize.
	PageSize int
	// PollInterval is how often the logs look again at a step that has
	// not started; 0 means half a second.
	PollInterval time.Duration
}

// Server is one dashboard.
type Server struct {
	cfg    Config
	guard  *security.Guard
	index  *runindex.Index
	render *pages.Renderer
	mux    *http.ServeMux
}

// New returns the dashboard that will listen on listen, which its user
// asked for as address (--address).
func New(cfg Config, listen *net.TCPAddr, address string) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 500 * time.Millisecond
	}
	if cfg.LogSource == nil {
		cfg.LogSource = func(ns, run string) runlogs.Source {
			return &runlogs.PodSource{Reader: cfg.Client, Pods: cfg.Kube.CoreV1(), Namespace: ns, Run: run, PollInterval: cfg.PollInterval}
		}
	}
	guard, err := security.NewGuard(listen, address)
	if err != nil {
		return nil, err
	}
	render, err := pages.NewRenderer()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, guard: guard, render: render, mux: http.NewServeMux(),
		index: runindex.New(runindex.ListWatch(cfg.Client, cfg.Namespace))}
	s.routes()
	return s, nil
}

// Start keeps the runs index until ctx is done; call it once, before
// serving.
func (s *Server) Start(ctx context.Context) { go s.index.Run(ctx) }

// Handler is the dashboard's HTTP handler, behind its guard.
func (s *Server) Handler() http.Handler { return s.guard.Wrap(s.mux) }

// Token is the CSRF token of the dashboard's forms.
func (s *Server) Token() string { return s.guard.Token() }

func (s *Server) routes() {
	static := http.FileServerFS(pages.Static())
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", noCache(static)))
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/runs", http.StatusSeeOther)
	})
	s.mux.HandleFunc("GET /runs", s.runs)
	s.mux.HandleFunc("GET /live/runs", s.liveRuns)
	s.mux.HandleFunc("GET /runs/{ns}/{name}", s.run)
	s.mux.HandleFunc("GET /runs/{ns}/{name}/live", s.liveRun)
	s.mux.HandleFunc("GET /runs/{ns}/{name}/log.txt", s.runLog)
	s.mux.HandleFunc("GET /runs/{ns}/{name}/yaml", s.runYAML)
	s.mux.HandleFunc("GET /tasks", s.tasks)
	s.mux.HandleFunc("GET /tasks/{ns}/{name}", s.task)
	s.mux.HandleFunc("POST /runs/{ns}/{name}/cancel", s.action(s.cancel))
	s.mux.HandleFunc("POST /runs/{ns}/{name}/rerun", s.action(s.rerun))
	s.mux.HandleFunc("POST /runs/{ns}/{name}/delete", s.action(s.delete))
	s.mux.HandleFunc("POST /tasks/{ns}/{name}/start", s.action(s.start))
}

// noCache makes the browser ask again for the static files each time: they
// are small, and a new plugin's must never meet an old page's.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// layout is what every page shows around its content.
func (s *Server) layout(r *http.Request) pages.Layout {
	scope := "All namespaces"
	if s.cfg.Namespace != "" {
		scope = "Namespace " + s.cfg.Namespace
	}
	return pages.Layout{Scope: scope, Cluster: s.cfg.Cluster, CSRF: s.guard.Token(), ReadOnly: s.cfg.ReadOnly, Flash: flash(r)}
}

// inScope reports whether namespace ns is one the dashboard shows.
func (s *Server) inScope(ns string) bool {
	return s.cfg.Namespace == "" || ns == s.cfg.Namespace
}

// pageOrFail writes page, or, should it fail to render, an error.
func (s *Server) pageOrFail(w http.ResponseWriter, code int, page string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var buf bytes.Buffer
	if err := s.render.Page(&buf, page, data); err != nil {
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
