package dashboard_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// env is the API server the package's tests share (with the conversion
// webhook, for the YAML in both versions); nil under -short.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// served is a dashboard of a test's namespace, served over HTTP on loopback.
type served struct {
	*testenv.Harness
	url    string
	server *dashboard.Server
	// paths are the API paths the dashboard's clients requested.
	mu    sync.Mutex
	paths []string
}

// serve starts a dashboard of a fresh namespace, with the API server's
// admin credentials or, if user is set, that user's.
func serve(t *testing.T, user string, change ...func(*dashboard.Config)) *served {
	t.Helper()
	s := &served{Harness: env.NewHarness(t)}
	cfg := rest.CopyConfig(env.Config)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			s.mu.Lock()
			s.paths = append(s.paths, r.Method+" "+r.URL.Path)
			s.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dc := dashboard.Config{Client: c, Kube: kube, Namespace: s.NS, Cluster: cfg.Host, PageSize: 3}
	for _, f := range change {
		f(&dc)
	}
	s.server, err = dashboard.New(dc, l.Addr().(*net.TCPAddr), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.server.Start(ctx)
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: s.server.Handler(), BaseContext: func(net.Listener) context.Context { return ctx }}}
	srv.Start()
	t.Cleanup(func() { cancel(); srv.Close() })
	s.url = srv.URL
	return s
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// get GETs path and returns the status and the page.
func (s *served) get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// post POSTs form to path as the dashboard's own page does, and returns the
// status and where it redirects to.
func (s *served) post(t *testing.T, path string, form url.Values) (int, string, string) {
	t.Helper()
	form.Set("csrf", s.server.Token())
	req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.url)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// eventually waits for check, as the tests' other waits do.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	testenv.Eventually(t, check, "%s", what)
}
