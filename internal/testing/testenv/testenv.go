// Package testenv starts a real kube-apiserver and etcd (envtest) with
// minitask's generated CRDs and webhook configurations installed, and a manager
// that serves the webhooks in-process, so tests see exactly what the API server
// decides: conversion, validation, defaulting and the status subresource.
//
// It is a library below the code it hosts: it imports no webhook and no
// controller. Tests hand it the webhook setup to serve, in the manager's
// (webhooks.SetupWithManager), and start their controllers themselves
// (Env.StartManager, Harness.StartManager). Use it from TestMain in an
// external test package:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }
package testenv

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/minitask-dev/minitask/internal/scheme"
)

// Env is a running API server with minitask installed and its webhooks served.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is uncached and knows the built-ins and every minitask version
	// (internal/scheme).
	Client client.Client
	// Scheme is the scheme Client and the managers use.
	Scheme *k8sruntime.Scheme
	// Kubeconfig is the path of a kubeconfig file for Config, for kubectl.
	Kubeconfig string
	// Kubectl is the path of the kubectl binary that matches the API server.
	Kubectl string
	// RepoRoot is the repository's top directory.
	RepoRoot string
	// EtcdEndpoint is etcd's client URL, for tests that check what is stored.
	EtcdEndpoint string

	env          *envtest.Environment
	stopWebhooks func()
	tmpDir       string
}

// Run starts an Env that serves the webhooks serveWebhooks sets up, stores
// it in *env, runs the package's tests and exits. Under -short it starts
// nothing and leaves *env nil, so that the package's unit tests run alone;
// tests that need the API server skip themselves.
func Run(m *testing.M, env **Env, serveWebhooks func(ctrl.Manager) error, opts ...Option) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	e, err := Start(serveWebhooks, opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the test API server: %v\n", err)
		os.Exit(1)
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the test API server: %v\n", err)
	}
	os.Exit(code)
}

// ForTest starts an Env that serves the webhooks serveWebhooks sets up, for
// one test, and stops it when the test ends. Under -short it skips the test.
// It suits packages whose other tests, in the same test binary, need no API
// server (so TestMain cannot start one for all).
func ForTest(t testing.TB, serveWebhooks func(ctrl.Manager) error, opts ...Option) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a kube-apiserver and etcd")
	}
	e, err := Start(serveWebhooks, opts...)
	if err != nil {
		t.Fatalf("starting the test API server: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the test API server: %v", err)
		}
	})
	return e
}

// Start starts etcd and kube-apiserver on loopback, installs the CRDs from
// config/crd/bases with conversion pointed at a local webhook server, installs
// config/webhook/manifests.yaml, and serves the webhooks from a manager that
// serveWebhooks sets up: webhooks.SetupWithManager, so that the API server
// calls what ships. opts change the API server or etcd from envtest's
// defaults.
func Start(serveWebhooks func(ctrl.Manager) error, opts ...Option) (*Env, error) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(logLevel())))
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	s := scheme.New()
	env := &envtest.Environment{
		Scheme:                s,
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")},
			// The converters live outside the API types (NewHubSpokeConverter),
			// so envtest's scheme check would see no convertible type and drop
			// conversion from the CRDs.
			IgnoreSchemeConvertible:  true,
			IgnoreErrorIfPathMissing: true,
			LocalServingHost:         "127.0.0.1",
		},
	}
	for _, opt := range opts {
		opt(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest (assets in %s): %w", assets, err)
	}
	e := &Env{Config: cfg, Scheme: s, RepoRoot: root, env: env, Kubectl: filepath.Join(assets, "kubectl"),
		EtcdEndpoint: env.ControlPlane.Etcd.URL.String()}
	if err := e.init(serveWebhooks); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) init(serveWebhooks func(ctrl.Manager) error) error {
	var err error
	if e.Client, err = client.New(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	if e.tmpDir, err = os.MkdirTemp("", "minitask-testenv-"); err != nil {
		return err
	}
	user, err := e.env.AddUser(envtest.User{Name: "test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding kubectl user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	e.Kubeconfig = filepath.Join(e.tmpDir, "kubeconfig")
	if err := os.WriteFile(e.Kubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}
	return e.startWebhooks(serveWebhooks)
}

// startWebhooks runs the webhook-only manager for the whole package, so that
// tests may stop and restart their own controller managers without ever
// taking conversion down.
func (e *Env) startWebhooks(serveWebhooks func(ctrl.Manager) error) error {
	wio := e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("creating webhook manager: %w", err)
	}
	if err := serveWebhooks(mgr); err != nil {
		return fmt.Errorf("setting up the webhooks: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.stopWebhooks = func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "webhook manager stopped with error: %v\n", err)
		}
	}
	return waitForTLS(net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort)), 30*time.Second)
}

// Stop stops the webhook manager, the API server and etcd.
func (e *Env) Stop() error {
	if e.stopWebhooks != nil {
		e.stopWebhooks()
	}
	err := e.env.Stop()
	// After the API server: a restarted one reads its certificates from here.
	if e.tmpDir != "" {
		_ = os.RemoveAll(e.tmpDir)
	}
	return err
}

// StartManager starts a manager (no webhooks, metrics or health endpoints) that
// setup fills with controllers, and returns a function that stops it and waits
// until it has stopped. Tests may start several in turn, e.g. to restart the
// controller mid-run. The manager is stopped at the end of the test anyway.
func (e *Env) StartManager(t testing.TB, setup func(ctrl.Manager) error, opts ...func(*ctrl.Options)) (stop func()) {
	t.Helper()
	o := ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// A restarted manager registers the same controller names again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, opt := range opts {
		opt(&o)
	}
	mgr, err := ctrl.NewManager(e.Config, o)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("setting up manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with error: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// Namespace creates a fresh namespace for one test and returns its name.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

// Create creates objs in namespace ns, failing the test on the first error.
func (e *Env) Create(t testing.TB, ns string, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		obj.SetNamespace(ns)
		if err := e.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// RunKubectl runs the matching kubectl against the API server and returns
// what it printed on stdout and on stderr (where warnings go).
func (e *Env) RunKubectl(args ...string) (stdout, stderr string, err error) {
	var out, errOut strings.Builder
	cmd := exec.Command(e.Kubectl, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func waitForTLS(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probes that the server is up
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook server on %s not ready after %s: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logLevel keeps test output to warnings and errors unless TESTENV_VERBOSE is set.
func logLevel() zapcore.Level {
	if os.Getenv("TESTENV_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.WarnLevel
}
