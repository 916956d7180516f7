// Package certs gives the webhook server a serving certificate without
// cert-manager. Every replica of the manager runs a Rotator, which keeps a CA
// and a serving certificate valid in one Secret, injects the CA bundle into
// the CRDs' conversion webhook and the validating webhook configuration, and
// serves the certificate straight from the Secret, without a volume to wait
// for. A CA rotation never breaks a webhook call: the new CA joins the bundle
// before any certificate it signed is served (see Policy.CAPropagation).
//
// The Rotator reads and writes only objects it knows by name, never lists or
// watches, so that RBAC can grant it exactly those objects.
package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The objects an installation (config/default) names; RBAC grants the
// manager these and no others, so the names here and in the markers must
// match the kustomize output (namePrefix minitask-).
//
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;update,resourceNames=minitask-webhook-server-cert
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;update,resourceNames=tasks.minitask.dev;taskruns.minitask.dev
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;update,resourceNames=minitask-validating-webhook-configuration

// The installation's names; see the RBAC markers above.
const (
	installSecret        = "minitask-webhook-server-cert"
	installService       = "minitask-webhook-service"
	installWebhookConfig = "minitask-validating-webhook-configuration"
)

// The CRDs whose conversion webhook the manager serves.
var installCRDs = []string{"tasks.minitask.dev", "taskruns.minitask.dev"}

const (
	// namespaceEnv names the manager's namespace (config/manager sets it
	// from the downward API); serviceAccountNamespace is the fallback.
	namespaceEnv            = "POD_NAMESPACE"
	serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	defaultSyncInterval     = 30 * time.Second
	minRetryInterval        = 500 * time.Millisecond
)

var errNoCertificate = errors.New("no webhook serving certificate yet")

var certExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "minitask_webhook_certificate_expiration_timestamp_seconds",
	Help: "When the self-managed webhook CA and serving certificate expire (Unix time).",
}, []string{"certificate"})

func init() {
	metrics.Registry.MustRegister(certExpiry)
}

// Config says which Secret holds the certificates, what they are for and
// where the CA bundle goes.
type Config struct {
	// Secret holds the CA and the serving certificate. It must exist: the
	// manager may update it but not create it (create cannot be granted by
	// name), so the installation ships it empty.
	Secret types.NamespacedName
	// Hosts are the DNS names and IP addresses the serving certificate is for.
	Hosts []string
	// CRDs are the CRDs whose conversion webhook gets the CA bundle.
	CRDs []string
	// ValidatingWebhookConfigurations get the CA bundle in every webhook.
	ValidatingWebhookConfigurations []string
	// Policy sets lifetimes; zero means DefaultPolicy.
	Policy Policy
	// SyncInterval is how often the Secret and the CA bundles are read again
	// at most, which bounds how long another replica's rotation or a removed
	// caBundle goes unnoticed; zero means 30s.
	SyncInterval time.Duration
}

// InstallConfig is the Config for the installation in config/default, in the
// namespace the manager runs in (POD_NAMESPACE, else the service account's).
func InstallConfig() (Config, error) {
	ns := os.Getenv(namespaceEnv)
	if ns == "" {
		b, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return Config{}, fmt.Errorf("finding the manager's namespace: set %s or run in a Pod: %w", namespaceEnv, err)
		}
		ns = strings.TrimSpace(string(b))
	}
	return Config{
		Secret: types.NamespacedName{Namespace: ns, Name: installSecret},
		Hosts: []string{
			installService + "." + ns + ".svc",
			installService + "." + ns + ".svc.cluster.local",
		},
		CRDs:                            slices.Clone(installCRDs),
		ValidatingWebhookConfigurations: []string{installWebhookConfig},
	}, nil
}

// Rotator is a manager Runnable that keeps the webhook certificates valid and
// injected, and serves them through TLSOption. Every replica runs one, leader
// or not, since every replica serves the webhooks.
type Rotator struct {
	cfg    Config
	reader client.Reader
	writer client.Writer
	log    logr.Logger

	serving atomic.Pointer[tls.Certificate]
	mu      sync.Mutex
	// ready is nil once a certificate is served whose CA is in every bundle,
	// else why not.
	ready error
}

// NewRotator returns a Rotator for cfg; SetupWithManager makes it run.
func NewRotator(cfg Config) *Rotator {
	if cfg.Policy == (Policy{}) {
		cfg.Policy = DefaultPolicy
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = defaultSyncInterval
	}
	return &Rotator{cfg: cfg, ready: errNoCertificate}
}

// TLSOption makes a TLS server (the webhook server's TLSOpts) serve the
// Rotator's current certificate.
func (r *Rotator) TLSOption(c *tls.Config) {
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		if cert := r.serving.Load(); cert != nil {
			return cert, nil
		}
		return nil, errNoCertificate
	}
}

// SetupWithManager adds the Rotator to mgr, reading through the uncached API
// reader (no informer, so no list or watch), and makes the manager's
// readiness wait for the certificate.
func (r *Rotator) SetupWithManager(mgr manager.Manager) error {
	r.reader, r.writer = mgr.GetAPIReader(), mgr.GetClient()
	r.log = mgr.GetLogger().WithName("webhook-certs")
	if err := mgr.Add(r); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("webhook-cert", r.ReadyCheck)
}

// NeedLeaderElection is false: non-leaders serve webhooks too.
func (r *Rotator) NeedLeaderElection() bool { return false }

// ReadyCheck is a healthz.Checker that fails until the Rotator serves a
// certificate that the CA bundles trust, or once that certificate expired.
func (r *Rotator) ReadyCheck(*http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready != nil {
		return r.ready
	}
	if cert := r.serving.Load(); cert == nil || !time.Now().Before(cert.Leaf.NotAfter) {
		return errors.New("the webhook serving certificate expired and could not be renewed")
	}
	return nil
}

// Start syncs until ctx is done: at once, then when the certificates are due
// a change or SyncInterval has passed, and sooner after a failure.
func (r *Rotator) Start(ctx context.Context) error {
	retry := minRetryInterval
	for {
		wait, err := r.sync(ctx)
		switch {
		case ctx.Err() != nil:
			// The manager is stopping; a sync it cut short is no failure.
			return nil //nolint:nilerr // err only says that ctx ended
		case err == nil:
			retry = minRetryInterval
		case apierrors.IsConflict(err):
			// Another replica wrote first; read what it wrote.
			r.log.V(1).Info("retrying after a conflict", "error", err.Error())
			wait = minRetryInterval
		default:
			r.log.Error(err, "syncing the webhook certificates; retrying", "in", retry)
			r.setNotReady(err)
			wait, retry = retry, min(2*retry, r.cfg.SyncInterval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// sync reads the Secret, replaces what is due, injects the CA bundle, and
// serves the serving certificate; it returns when to sync next.
//
// The order keeps every served certificate trusted: the bundle the Secret
// already holds is injected before the Secret changes (so a switch to a new
// CA's certificate happens only with that CA in the bundles), and the new
// bundle is injected before the new certificate is served. Only the replica
// whose Secret update wins injects a CA it generated.
func (r *Rotator) sync(ctx context.Context) (time.Duration, error) {
	secret := &corev1.Secret{}
	if err := r.reader.Get(ctx, r.cfg.Secret, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("the webhook certificate Secret %s does not exist; the installation creates it empty, "+
				"and the manager may only update it: %w", r.cfg.Secret, err)
		}
		return 0, fmt.Errorf("reading the webhook certificate Secret %s: %w", r.cfg.Secret, err)
	}
	cur := state{data: secret.Data}
	if at, err := time.Parse(time.RFC3339Nano, secret.Annotations[caRotatedAtAnnotation]); err == nil {
		cur.caRotatedAt = at
	}
	now := time.Now()
	pl, err := r.cfg.Policy.next(cur, r.cfg.Hosts, now)
	if err != nil {
		return 0, err
	}

	if len(pl.changes) > 0 {
		if b := secret.Data[caBundleKey]; len(b) > 0 {
			if err := r.inject(ctx, b); err != nil {
				return 0, err
			}
		}
		secret.Data = pl.data
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[caRotatedAtAnnotation] = pl.caRotatedAt.UTC().Format(time.RFC3339Nano)
		if err := r.writer.Update(ctx, secret); err != nil {
			return 0, fmt.Errorf("updating the webhook certificate Secret %s: %w", r.cfg.Secret, err)
		}
		r.log.Info("updated the webhook certificates", "secret", r.cfg.Secret, "changes", pl.changes,
			"servingNotAfter", pl.serving.cert.NotAfter.UTC())
	}
	if err := r.inject(ctx, pl.bundle); err != nil {
		return 0, err
	}
	if err := r.serve(pl.serving); err != nil {
		return 0, err
	}
	if ca := parseCerts(pl.data[caCertKey]); len(ca) == 1 {
		certExpiry.WithLabelValues("ca").Set(float64(ca[0].NotAfter.Unix()))
	}
	certExpiry.WithLabelValues("serving").Set(float64(pl.serving.cert.NotAfter.Unix()))
	return max(min(time.Until(pl.recheck), r.cfg.SyncInterval), minRetryInterval), nil
}

// serve makes the TLS server use kp from its next handshake on.
func (r *Rotator) serve(kp *keyPair) error {
	cert, err := tls.X509KeyPair(kp.certPEM, kp.keyPEM)
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	cert.Leaf = kp.cert
	if old := r.serving.Load(); old == nil || !old.Leaf.Equal(kp.cert) {
		r.log.Info("serving a new webhook certificate", "issuer", kp.cert.Issuer.CommonName,
			"notAfter", kp.cert.NotAfter.UTC(), "hosts", r.cfg.Hosts)
	}
	r.serving.Store(&cert)
	r.mu.Lock()
	r.ready = nil
	r.mu.Unlock()
	return nil
}

// setNotReady reports err until the first certificate is served; after that
// a failing sync keeps serving the certificate it has, which stays valid for
// weeks, rather than taking the replica out of its Service.
func (r *Rotator) setNotReady(err error) {
	if r.serving.Load() != nil {
		return
	}
	r.mu.Lock()
	r.ready = err
	r.mu.Unlock()
}
