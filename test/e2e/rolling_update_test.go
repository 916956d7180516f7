//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestRollingUpdateFromRelease6 rehearses the upgrade from release 6 to now
// (release 7) as an HA install's rollout takes it: replicas of both
// releases serve the webhooks behind the one endpoint the webhook
// configuration names, taking turns request by request, while writers of
// all three versions keep writing Tasks and TaskRuns. Release 7's install
// (CRDs and webhook configuration) is applied while both serve: every path
// it names, release 6 serves (the rule make verify-api holds). Not one
// write may be refused, and every object must read back, through the
// version it was written through, as written.
func TestRollingUpdateFromRelease6(t *testing.T) {
	t.Parallel()
	r := newV1Rehearsal(t, "rolling-6", release6)
	_, release6Manager := release6.build(t)
	r.installRelease(release6, views{}, nil)
	// The replica is ready before the endpoint takes the port from the
	// manager serving it now: the API server has someone to call
	// throughout.
	old := startReplica(t, r.c, release6Manager)
	r.m.stop()
	endpoint := startWebhookEndpoint(t, r.c, old)
	r.lap("release 6 behind the endpoint")

	w := startWriters(t, r.c)
	w.waitForWrites(t, 30)
	r.lap("writes to release 6")

	current := startReplica(t, r.c, filepath.Join(r.c.repo, "bin/manager"))
	endpoint.route(old, current)
	r.kubectl("apply", "--server-side", "-f", r.c.env["MINITASK_MANIFESTS"])
	r.waitEstablished()
	w.waitForWrites(t, 60)
	r.lap("writes to both releases")

	endpoint.route(current)
	old.stop()
	w.waitForWrites(t, 30)
	written := w.stop()
	r.lap("writes to release 7")

	served := endpoint.served()
	for _, m := range []*manager{old, current} {
		if served[m.webhookPort] == 0 {
			t.Errorf("the endpoint sent no request to the replica on port %s: %v", m.webhookPort, served)
		}
	}
	if errs := w.refused(); len(errs) > 0 {
		t.Errorf("%d of %d writes were refused during the rolling update, want none:\n%s", len(errs), written, strings.Join(errs, "\n"))
	}
	if failed := endpoint.failures(); len(failed) > 0 {
		t.Errorf("the endpoint failed to pass on %d requests:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	w.checkWritten(t, r.c)
	t.Logf("rolling update from release 6: %d writes through v1alpha1, v1beta1 and v1, none refused; webhook requests by replica port: %v "+
		"(%d canceled by the API server before an answer); %s",
		written, served, endpoint.abandoned.Load(), r.timesLine())
}

// startReplica starts a replica of bin, as an HA install runs it: leader
// election on, and ports of its own for the webhooks and the probes.
func startReplica(t *testing.T, c *cluster, bin string) *manager {
	t.Helper()
	port := fmt.Sprint(freePort())
	m := startManagerBinary(t, c, bin, "--webhook-port="+port,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", freePort()),
		"--leader-elect", "--leader-election-namespace=default")
	m.webhookPort = port
	return m
}

// webhookEndpoint is what a Service is to the replicas of an HA install:
// the address the webhook configuration names (MINITASK_WEBHOOK_PORT), in
// front of the replicas that are ready, each request going to the next.
type webhookEndpoint struct {
	mu       sync.Mutex
	backends []*httputil.ReverseProxy
	ports    []string
	next     atomic.Uint64
	counts   sync.Map // port -> *atomic.Int64
	// failed are the requests it could not pass on, and why.
	failed []string
	// abandoned counts the requests their caller canceled before an answer.
	abandoned atomic.Int64
}

// startWebhookEndpoint serves the endpoint with the webhook certificate
// until the test ends, in front of replicas.
func startWebhookEndpoint(t *testing.T, c *cluster, replicas ...*manager) *webhookEndpoint {
	t.Helper()
	dir := c.env["MINITASK_WEBHOOK_CERT_DIR"]
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:"+c.env["MINITASK_WEBHOOK_PORT"], &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("listening where the webhook configuration sends requests: %v", err)
	}
	e := &webhookEndpoint{}
	e.route(replicas...)
	server := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go server.Serve(l) //nolint:errcheck // ends with Close
	t.Cleanup(func() { server.Close() })
	return e
}

// route sends requests to the webhook servers of replicas from now on.
func (e *webhookEndpoint) route(replicas ...*manager) {
	var backends []*httputil.ReverseProxy
	var ports []string
	for _, m := range replicas {
		target := &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", m.webhookPort)}
		proxy := httputil.NewSingleHostReverseProxy(target)
		// The replica's certificate is the one this endpoint serves, made
		// for the endpoint's name; the hop is loopback.
		proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback, the test's own certificate
		proxy.ErrorHandler = func(w http.ResponseWriter, req *http.Request, err error) {
			// A request the API server gave up on itself, as it does a
			// webhook call when the write that needed it is canceled (a
			// replica that stops cancels its own status writes in flight),
			// is not one the endpoint failed to pass on.
			if req.Context().Err() != nil {
				e.abandoned.Add(1)
			} else {
				e.fail(req, err)
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
		backends, ports = append(backends, proxy), append(ports, m.webhookPort)
	}
	e.mu.Lock()
	e.backends, e.ports = backends, ports
	e.mu.Unlock()
}

func (e *webhookEndpoint) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	e.mu.Lock()
	if len(e.backends) == 0 {
		e.mu.Unlock()
		e.fail(req, errors.New("no replica is ready"))
		http.Error(w, "no replica is ready", http.StatusServiceUnavailable)
		return
	}
	i := int(e.next.Add(1) % uint64(len(e.backends)))
	backend, port := e.backends[i], e.ports[i]
	e.mu.Unlock()
	n, _ := e.counts.LoadOrStore(port, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	backend.ServeHTTP(w, req)
}

// fail records a request the endpoint could not pass on.
func (e *webhookEndpoint) fail(req *http.Request, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed = append(e.failed, fmt.Sprintf("%s %s %s: %v", time.Now().Format(time.TimeOnly), req.Method, req.URL.Path, err))
}

// failures are the requests the endpoint could not pass on.
func (e *webhookEndpoint) failures() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.failed)
}

// served is how many requests went to each replica, by webhook port.
func (e *webhookEndpoint) served() map[string]int64 {
	got := map[string]int64{}
	e.counts.Range(func(k, v any) bool {
		got[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return got
}

// writers write Tasks and TaskRuns through v1alpha1, v1beta1 and v1, one
// writer per version, each creating a Task, labelling it, and creating a
// run of it, over and over, until stopped.
type writers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	// written are the objects written, as last written, by key; errs the
	// refusals.
	written map[string]client.Object
	errs    []string
	count   atomic.Int64
}

func startWriters(t *testing.T, c *cluster) *writers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writers{cancel: cancel, written: map[string]client.Object{}}
	for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				w.writeOnce(ctx, c, version, i)
			}
		}()
	}
	t.Cleanup(func() { w.stop() })
	return w
}

// writeOnce writes one Task, labels it, and creates one run of it, through
// version.
func (w *writers) writeOnce(ctx context.Context, c *cluster, version string, i int) {
	name := fmt.Sprintf("rolling-%s-%d", version, i)
	task := wrappers.Task(ns, name).Step("say", "alpine:3", "echo "+name).Obj()
	run := wrappers.TaskRun(ns, name, name).Obj()
	var objs []client.Object
	switch version {
	case "v1alpha1":
		objs = []client.Object{wrappers.V1alpha1Task(ns, name).Step("say", "alpine:3", "echo "+name).Obj(),
			wrappers.V1alpha1TaskRun(ns, name, name).Obj()}
	case "v1beta1":
		objs = []client.Object{wrappers.V1beta1Task(task), wrappers.V1beta1TaskRun(run)}
	default:
		objs = []client.Object{task, run}
	}
	if !w.write(ctx, version, "create", objs[0], func() error { return c.client.Create(ctx, objs[0]) }) {
		return
	}
	labelled := objs[0].DeepCopyObject().(client.Object)
	labelled.SetLabels(map[string]string{"written-through": version})
	if !w.write(ctx, version, "label", labelled, func() error { return c.client.Update(ctx, labelled) }) {
		return
	}
	w.write(ctx, version, "create", objs[1], func() error { return c.client.Create(ctx, objs[1]) })
}

// write does one write of obj, and records it or its refusal. A write cut
// short by the writers' stop counts as neither, and what it wrote, which
// the API server may or may not have taken, is not checked.
func (w *writers) write(ctx context.Context, version, verb string, obj client.Object, do func() error) bool {
	err := do()
	key := fmt.Sprintf("%s %T %s", version, obj, obj.GetName())
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case ctx.Err() != nil && err != nil:
		delete(w.written, key)
		return false
	case err != nil:
		w.errs = append(w.errs, fmt.Sprintf("%s %s: %v", verb, key, err))
		return false
	}
	w.written[key] = obj
	w.count.Add(1)
	return true
}

// waitForWrites waits for n more writes to be done.
func (w *writers) waitForWrites(t *testing.T, n int64) {
	t.Helper()
	want := w.count.Load() + n
	waitFor(t, 2*time.Minute, fmt.Sprintf("%d more writes", n), func(context.Context) error {
		if got := w.count.Load(); got < want {
			return fmt.Errorf("%d writes done, want %d (%d refused)", got, want, len(w.refused()))
		}
		return nil
	})
}

// stop stops the writers, and returns how many writes they did.
func (w *writers) stop() int64 {
	w.cancel()
	w.wg.Wait()
	return w.count.Load()
}

func (w *writers) refused() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.errs)
}

// checkWritten reads every object written back through the version it was
// written through: its spec and labels must be what was written.
func (w *writers) checkWritten(t *testing.T, c *cluster) {
	t.Helper()
	ctx := context.Background()
	for key, obj := range w.written {
		got := obj.DeepCopyObject().(client.Object)
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			t.Errorf("%s, written during the rolling update: %v", key, err)
			continue
		}
		if diff := cmp.Diff(specAndLabels(t, obj), specAndLabels(t, got)); diff != "" {
			t.Errorf("%s reads back otherwise than written (-written +read):\n%s", key, diff)
		}
	}
}

// specAndLabels is what a writer said of obj: its spec and labels.
func specAndLabels(t *testing.T, obj client.Object) map[string]any {
	m := jsonMap(t, obj)
	return map[string]any{"spec": m["spec"], "labels": obj.GetLabels()}
}
