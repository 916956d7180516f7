package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/minitask-dev/minitask/internal/certs"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// replica is one manager replica as config/default runs it: leader
// election, the webhooks on their own port, and a Rotator.
type replica struct {
	name    string
	addr    string
	rotator *certs.Rotator
	elected <-chan struct{}
}

// leader says whether the replica won the leader election.
func (r *replica) leader() bool {
	select {
	case <-r.elected:
		return true
	default:
		return false
	}
}

// startReplica starts a manager that serves the webhooks on 127.0.0.1 with
// certificates from a Rotator for cfg, talking to the API server as restCfg.
func startReplica(t *testing.T, env *testenv.Env, name string, restCfg *rest.Config, cfg certs.Config) *replica {
	t.Helper()
	r := &replica{name: name, addr: testenv.FreeAddr(t), rotator: certs.NewRotator(cfg)}
	_, port, _ := net.SplitHostPort(r.addr)
	p, _ := strconv.Atoi(port)
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: "127.0.0.1", Port: p,
			TLSOpts: append(certs.ServingTLSOptions(false), r.rotator.TLSOption),
		}),
		LeaderElection:          true,
		LeaderElectionID:        "minitask.minitask.dev",
		LeaderElectionNamespace: cfg.Secret.Namespace,
		Logger:                  ctrl.Log.WithName(name),
	})
	if err != nil {
		t.Fatalf("creating manager %s: %v", name, err)
	}
	if err := webhooks.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := r.rotator.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	r.elected = mgr.Elected()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager %s stopped with error: %v", name, err)
		}
	})
	return r
}

// servedCert is the certificate the replica serves now, unverified.
func (r *replica) servedCert() (*x509.Certificate, error) {
	conn, err := tls.Dial("tcp", r.addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspects, trusts nothing
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// handshake connects to addr trusting only the PEM bundle, as the API server does.
func handshake(addr string, bundle []byte) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		return errors.New("the CA bundle holds no certificate")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return conn.Close()
}

// proxy spreads TCP connections over backends in turn, as a Service spreads
// them over the replicas' Pods.
type proxy struct {
	addr  string
	conns []atomic.Int64
}

func startProxy(t *testing.T, backends ...string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: l.Addr().String(), conns: make([]atomic.Int64, len(backends))}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	wg.Go(func() {
		for n := 0; ; n++ {
			in, err := l.Accept()
			if err != nil {
				return
			}
			i := n % len(backends)
			p.conns[i].Add(1)
			go pipe(in, backends[i])
		}
	})
	return p
}

func pipe(in net.Conn, backend string) {
	defer func() { _ = in.Close() }()
	out, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer func() { _ = out.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}
