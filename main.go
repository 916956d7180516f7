// Command manager runs the minitask controller and its webhooks: conversion
// of v1alpha1 and v1beta1 to and from v1 (the hub and the storage version),
// admission of Tasks and TaskRuns, the storage migration, and the TaskRun
// reconciler, which reads and writes only v1.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/certs"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/storedversions"
	"github.com/minitask-dev/minitask/internal/timerepair"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// options are the manager's command-line flags, named as kubebuilder v4 names
// them so that deployment tooling can drive the manager.
type options struct {
	metricsAddr      string
	metricsSecure    bool
	probeAddr        string
	pprofAddr        string
	leaderElect      bool
	leaderElectNS    string
	enableHTTP2      bool
	webhookHost      string
	webhookPort      int
	webhookCertPath  string
	webhookCertName  string
	webhookCertKey   string
	metricsCertPath  string
	metricsCertName  string
	metricsCertKey   string
	defaultTimeout   time.Duration
	maxConcurrent    int
	enableController bool
	storageMigration bool
	certManagement   string
	shutdownTimeout  time.Duration
	// saUseCheck is --serviceaccount-use-check.
	saUseCheck bool
	// conversionHandler is --conversion-handler.
	conversionHandler string
	// defaultTTL is --default-ttl-after-finished.
	defaultTTL time.Duration
	// imagePullTimeout is --image-pull-timeout.
	imagePullTimeout time.Duration
	// podConfigTimeout is --pod-config-timeout.
	podConfigTimeout time.Duration
	// nodeLostTimeout is --node-lost-timeout.
	nodeLostTimeout time.Duration
	podShape        string
}

func parseFlags() (options, zap.Options) {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, e.g. :8443 (HTTPS) or :8080 (HTTP); 0 disables it.")
	flag.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS, for authenticated and authorized clients only.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "The address the health and readiness probes bind to.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"The address Go's profiles (/debug/pprof/) are served on, e.g. 127.0.0.1:8082; 0 disables them.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one replica reconciles; every replica serves the webhooks.")
	flag.StringVar(&o.leaderElectNS, "leader-election-namespace", "",
		"The namespace of the leader election's Lease; empty is the namespace the manager runs in, which a manager run outside the cluster must give.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Serve HTTP/2 on the webhook and metrics servers (off by default: CVE-2023-44487 rapid reset).")
	flag.StringVar(&o.webhookHost, "webhook-host", "",
		"The address the webhook server binds to, e.g. 127.0.0.1 for a local cluster; empty binds every interface.")
	flag.IntVar(&o.webhookPort, "webhook-port", 9443, "The port the webhook server listens on.")
	flag.StringVar(&o.webhookCertPath, "webhook-cert-path", "", "The directory holding the webhook server's certificate.")
	flag.StringVar(&o.webhookCertName, "webhook-cert-name", "tls.crt", "The webhook certificate file's name.")
	flag.StringVar(&o.webhookCertKey, "webhook-cert-key", "tls.key", "The webhook key file's name.")
	flag.StringVar(&o.metricsCertPath, "metrics-cert-path", "",
		"The directory holding the metrics server's certificate. If unset, the metrics server makes itself a self-signed one.")
	flag.StringVar(&o.metricsCertName, "metrics-cert-name", "tls.crt", "The metrics server's certificate file's name.")
	flag.StringVar(&o.metricsCertKey, "metrics-cert-key", "tls.key", "The metrics server's key file's name.")
	flag.DurationVar(&o.defaultTimeout, "default-timeout", runstate.DefaultTimeout,
		"The timeout of a TaskRun whose spec.timeout is absent; 0 means none.")
	flag.IntVar(&o.maxConcurrent, "max-concurrent-reconciles", controllers.DefaultMaxConcurrentReconciles,
		"How many TaskRuns are reconciled at once.")
	flag.BoolVar(&o.enableController, "enable-controller", true,
		"Run the TaskRun controller; false serves only the webhooks.")
	flag.BoolVar(&o.storageMigration, "storage-migration", true,
		"While leader, move objects still stored in an old API version to the storage version (by the platform's storage version migrator "+
			"where the cluster serves storagemigration.k8s.io/v1, else by rewriting them), trim the CRDs' status.storedVersions, "+
			"and rewrite in RFC 3339 the malformed times an earlier release stored.")
	flag.StringVar(&o.certManagement, "cert-management", "none",
		"How the webhook gets its certificate: none (from --webhook-cert-path, e.g. cert-manager's Secret), or self "+
			"(the manager makes, rotates and injects it, in the Secret minitask-webhook-server-cert; what install.yaml uses).")
	flag.DurationVar(&o.shutdownTimeout, "graceful-shutdown-timeout", 30*time.Second,
		"How long in-flight webhook requests and reconciles may take to finish once the manager is told to stop.")
	flag.BoolVar(&o.saUseCheck, "serviceaccount-use-check", true,
		"Admit a TaskRun naming spec.serviceAccountName only if its creator may use that ServiceAccount "+
			"(verb use on serviceaccounts) or create Pods in its namespace; false admits every TaskRun.")
	flag.StringVar(&o.conversionHandler, "conversion-handler", conversion.HandlerMinitask,
		"Which handler serves the conversion webhook: minitask (each object on its own, json/v2, every processor) "+
			"or controller-runtime (release 2's handler, kept for one release as a fallback).")
	flag.DurationVar(&o.defaultTTL, "default-ttl-after-finished", 0,
		"How long after it finished a TaskRun without spec.ttlSecondsAfterFinished is deleted, with its Pods; 0 keeps it.")
	flag.DurationVar(&o.imagePullTimeout, "image-pull-timeout", controllers.DefaultImagePullTimeout,
		"How long a step's image may fail to pull (ErrImagePull, ImagePullBackOff) before its TaskRun ends ImagePullFailed; "+
			"0 leaves it to the run's timeout.")
	flag.DurationVar(&o.podConfigTimeout, "pod-config-timeout", controllers.DefaultPodConfigTimeout,
		"How long the kubelet may fail to make a step's container (CreateContainerConfigError, CreateContainerError, RunContainerError) "+
			"or mount a volume (FailedMount) for the Pod's configuration before its TaskRun ends PodConfigFailed; 0 leaves it to the run's timeout.")
	flag.DurationVar(&o.nodeLostTimeout, "node-lost-timeout", controllers.DefaultNodeLostTimeout,
		"How long the node of a TaskRun's Pod may be not ready (Ready False or Unknown) before the Pod counts as lost with it: "+
			"the run ends PodFailed, naming the node, or with retries waits for the node to be deleted or tainted "+
			"node.kubernetes.io/out-of-service before its next attempt. Also the Pods' tolerationSeconds for the not-ready and "+
			"unreachable taints. 0 loses a Pod only with a node deleted or tainted out of service, and leaves the cluster's default tolerations.")
	flag.StringVar(&o.podShape, "pod-shape", runstate.PodShapeChained,
		"The shape of the Pods of TaskRuns: init-containers (every step but the last an init container: the kubelet starts each "+
			"at its next relist, a second a step on its defaults) or chained (every step a container that waits for the one before, "+
			"and hands over in milliseconds; a Task it cannot run as promised gets init containers, and its Pod says why). "+
			"Chained by default from release 7: release 6, the release a rollback goes back to, reads chained Pods; a rollback "+
			"by two releases needs init-containers first (docs/lifecycle.md, \"The Pod's shape\").")
	zo := zap.Options{Development: true}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	return o, zo
}

func main() {
	o, zo := parseFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("setup")
	if err := run(o); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	if o.podShape != runstate.PodShapeInitContainers && o.podShape != runstate.PodShapeChained {
		return fmt.Errorf("--pod-shape=%q: want %s or %s", o.podShape, runstate.PodShapeInitContainers, runstate.PodShapeChained)
	}
	tlsOpts := certs.ServingTLSOptions(o.enableHTTP2)

	webhookCert, err := watchCert(o.webhookCertPath, o.webhookCertName, o.webhookCertKey)
	if err != nil {
		return err
	}
	metricsCert, err := watchCert(o.metricsCertPath, o.metricsCertName, o.metricsCertKey)
	if err != nil {
		return err
	}
	webhookOpts := webhook.Options{Host: o.webhookHost, Port: o.webhookPort, TLSOpts: servingCert(tlsOpts, webhookCert)}
	metricsOpts := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.metricsSecure, TLSOpts: servingCert(tlsOpts, metricsCert)}
	rotator, err := certRotator(o)
	if err != nil {
		return err
	}
	if rotator != nil {
		webhookOpts.TLSOpts = append(webhookOpts.TLSOpts, rotator.TLSOption)
	}

	if o.metricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme.New(),
		Cache:                         runcache.Options(),
		Metrics:                       metricsOpts,
		WebhookServer:                 webhook.NewServer(webhookOpts),
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "minitask.minitask.dev",
		LeaderElectionNamespace:       o.leaderElectNS,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &o.shutdownTimeout,
	})
	if err != nil {
		return err
	}
	for _, w := range []*certwatcher.CertWatcher{webhookCert, metricsCert} {
		if w == nil {
			continue
		}
		if err := mgr.Add(w); err != nil {
			return err
		}
	}
	if rotator != nil {
		if err := rotator.SetupWithManager(mgr); err != nil {
			return err
		}
	}

	if !o.saUseCheck {
		log.Info("--serviceaccount-use-check=false: a TaskRun may name any ServiceAccount of its namespace")
	}
	if o.conversionHandler != conversion.HandlerMinitask {
		log.Info("The conversion webhook is served by another handler than the default", "conversionHandler", o.conversionHandler)
	}
	// The TaskRun CRD's storedVersions, watched on every replica: the stash
	// guard decodes a v1 status write only while a run that release 2
	// stored may remain.
	storedVersions := &storedversions.Watcher{Config: mgr.GetConfig(), HTTPClient: mgr.GetHTTPClient()}
	if err := mgr.Add(storedVersions); err != nil {
		return err
	}
	if err := webhooks.SetupWithOptions(mgr, webhooks.Options{
		ServiceAccountUseCheck: o.saUseCheck, ConversionHandler: o.conversionHandler, StoredVersions: storedVersions,
	}); err != nil {
		return err
	}
	if o.enableController {
		r := &controllers.TaskRunReconciler{
			Client:                  mgr.GetClient(),
			DefaultTimeout:          o.defaultTimeout,
			MaxConcurrentReconciles: o.maxConcurrent,
			DefaultTTLAfterFinished: o.defaultTTL,
			ImagePullTimeout:        o.imagePullTimeout,
			PodConfigTimeout:        o.podConfigTimeout,
			NodeLostTimeout:         o.nodeLostTimeout,
			PodShape:                o.podShape,
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	}

	if o.storageMigration {
		m := &storagemigration.Migrator{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(),
			Recorder: mgr.GetEventRecorder("minitask-storage-migration")}
		if err := mgr.Add(m); err != nil {
			return err
		}
		// Times an earlier release let in and Go cannot read would keep the
		// controller's cache of TaskRuns from ever syncing; read only while
		// the TaskRun CRD's storedVersions says a run may hold one.
		if err := mgr.Add(&timerepair.Repairer{Config: mgr.GetConfig(), HTTPClient: mgr.GetHTTPClient(),
			Writer: mgr.GetClient(), Reader: mgr.GetAPIReader()}); err != nil {
			return err
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready only once the webhook server serves: the API server calls it for
	// every v1alpha1 read and every Task write.
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}

	log.Info("starting manager", "webhookPort", o.webhookPort, "leaderElect", o.leaderElect)
	return mgr.Start(ctrl.SetupSignalHandler())
}

// watchCert returns a watcher of the certificate and key files in dir, which
// reads them again whenever they change (a certificate renewed by
// cert-manager, say, is served without a restart); nil for no dir.
func watchCert(dir, cert, key string) (*certwatcher.CertWatcher, error) {
	if dir == "" {
		return nil, nil
	}
	return certwatcher.New(filepath.Join(dir, cert), filepath.Join(dir, key))
}

// servingCert returns a copy of opts, each server's own to add to, that
// serves w's certificate if w is not nil.
func servingCert(opts []func(*tls.Config), w *certwatcher.CertWatcher) []func(*tls.Config) {
	opts = slices.Clone(opts)
	if w != nil {
		opts = append(opts, func(c *tls.Config) { c.GetCertificate = w.GetCertificate })
	}
	return opts
}

// certRotator returns the Rotator that --cert-management=self asks for, or nil.
func certRotator(o options) (*certs.Rotator, error) {
	switch {
	case o.certManagement == "none":
		return nil, nil
	case o.certManagement != "self":
		return nil, fmt.Errorf("--cert-management=%q: want none or self", o.certManagement)
	case o.webhookCertPath != "":
		return nil, errors.New("--webhook-cert-path needs --cert-management=none")
	}
	cfg, err := certs.InstallConfig()
	if err != nil {
		return nil, err
	}
	return certs.NewRotator(cfg), nil
}
