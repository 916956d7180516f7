package certs_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/certs"
	"github.com/minitask-dev/minitask/internal/testing/manifests"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

const (
	installNamespace      = "minitask-system"
	installSecret         = "minitask-webhook-server-cert"
	installWebhookConfig  = "minitask-validating-webhook-configuration"
	managerServiceAccount = "system:serviceaccount:minitask-system:minitask-controller-manager"
	propagation           = 2 * time.Second
)

var crdNames = []string{"tasks.minitask.dev", "taskruns.minitask.dev"}

// TestSelfManagedCertificates runs two replicas with Rotators, one leader
// and one not, as the manager's service account with the RBAC config/default grants, behind a
// proxy that the CRDs' conversion webhook and the validating webhook
// configuration point at. It checks that the Secret the installation ships
// empty gets certificates, that both CRDs and the webhook configuration get
// the CA, that conversion and validation then work through the API server,
// and that rotating the serving certificate and then the CA fails no request.
func TestSelfManagedCertificates(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	ctx := t.Context()
	install := manifests.Render(t, "default")
	createKinds(t, env, install, "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")

	// Objects to convert, made while testenv's own webhook still serves.
	ns := env.Namespace(t)
	tasks := seed(t, env, ns, 5)

	t.Setenv("POD_NAMESPACE", installNamespace)
	cfg, err := certs.InstallConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hosts = []string{"127.0.0.1"}
	cfg.Policy = certs.DefaultPolicy
	cfg.Policy.CAPropagation = propagation
	cfg.SyncInterval = 200 * time.Millisecond
	asManager := rest.CopyConfig(env.Config)
	asManager.Impersonate = rest.ImpersonationConfig{UserName: managerServiceAccount}
	replicas := []*replica{
		startReplica(t, env, "replica-a", asManager, cfg),
		startReplica(t, env, "replica-b", asManager, cfg),
	}
	// Two addresses for the same replicas, so that the hammer below can
	// repoint the CRDs from one to the other and make the API server open
	// new connections all along.
	lbs := []*proxy{startProxy(t, replicas[0].addr, replicas[1].addr), startProxy(t, replicas[0].addr, replicas[1].addr)}
	pointWebhooksAt(t, env, "https://"+lbs[0].addr)

	t.Run("a missing Secret keeps the replicas unready", func(t *testing.T) {
		waitFor(t, "both replicas to report the missing Secret", func() error {
			for _, r := range replicas {
				err := r.rotator.ReadyCheck(nil)
				if err == nil {
					return fmt.Errorf("%s is ready", r.name)
				}
				if !strings.Contains(err.Error(), "does not exist") {
					return fmt.Errorf("%s: %w", r.name, err)
				}
			}
			return nil
		})
	})

	createKinds(t, env, install, "Secret")
	var bundle []byte
	t.Run("the empty Secret gets certificates and every config the CA", func(t *testing.T) {
		waitReady(t, replicas)
		waitFor(t, "one replica to lead", func() error {
			if replicas[0].leader() == replicas[1].leader() {
				return fmt.Errorf("leaders: %s %t, %s %t", replicas[0].name, replicas[0].leader(), replicas[1].name, replicas[1].leader())
			}
			return nil
		})
		for _, r := range replicas {
			t.Logf("%s leads: %t", r.name, r.leader())
		}
		secret := getSecret(t, env)
		for _, k := range []string{"ca.crt", "ca.key", "ca-bundle.crt", "tls.crt", "tls.key"} {
			if len(secret.Data[k]) == 0 {
				t.Errorf("Secret %s has no %s", installSecret, k)
			}
		}
		bundle = secret.Data["ca-bundle.crt"]
		if got := mustInjectedBundles(t, env); !slices.Equal(got, []string{string(bundle)}) {
			t.Errorf("the CRDs and webhook configuration hold %d distinct CA bundles, want exactly the Secret's ca-bundle.crt", len(got))
		}
		for _, r := range replicas {
			if err := handshake(r.addr, bundle); err != nil {
				t.Errorf("%s: the served certificate does not verify against the CA bundle: %v", r.name, err)
			}
		}
	})

	t.Run("conversion and validation work through the API server", func(t *testing.T) {
		checkConversion(ctx, t, env, ns, tasks[0])
		bad := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "undeclared"}, Spec: v1beta1.TaskSpec{
			Steps: []v1beta1.Step{{Name: "say", Image: "alpine:3", Script: "echo $(params.nope)"}},
		}}
		if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "undeclared param") {
			t.Errorf("creating a Task with an undeclared param: %v; want it rejected by the webhook", err)
		}
	})

	t.Run("rotation fails no request", func(t *testing.T) {
		h := startHammer(env, ns, tasks, replicas, lbs)
		oldServing := servedCerts(t, replicas)

		// The serving certificate alone: remove it; the same CA signs a new one.
		editSecret(t, env, func(s *corev1.Secret) { delete(s.Data, "tls.crt"); delete(s.Data, "tls.key") })
		waitFor(t, "both replicas to serve a new certificate", func() error {
			for i, c := range servedCerts(t, replicas) {
				if c.Equal(oldServing[i]) {
					return fmt.Errorf("%s still serves the old certificate", replicas[i].name)
				}
			}
			return nil
		})

		// The CA: remove its key. A new CA joins the bundle at once, and
		// signs what is served only after the propagation time.
		oldCA := parseCert(t, getSecret(t, env).Data["ca.crt"])
		rotated := time.Now()
		editSecret(t, env, func(s *corev1.Secret) { delete(s.Data, "ca.key") })
		var newCA *x509.Certificate
		waitFor(t, "both replicas to serve a certificate the new CA signed", func() error {
			newCA = parseCert(t, getSecret(t, env).Data["ca.crt"])
			for i, c := range servedCerts(t, replicas) {
				if newCA.Equal(oldCA) || c.CheckSignatureFrom(newCA) != nil {
					return fmt.Errorf("%s serves a certificate from %s", replicas[i].name, c.Issuer.CommonName)
				}
			}
			return nil
		})
		if waited := time.Since(rotated); waited < propagation {
			t.Errorf("the new CA signed the served certificate after %s, before its propagation time %s", waited, propagation)
		}
		bundle := getSecret(t, env).Data["ca-bundle.crt"]
		if n := len(parseCerts(bundle)); n != 2 {
			t.Errorf("after the CA rotation the bundle holds %d CAs, want the new and the old one", n)
		}
		// Keep on for a while with the new certificates, however slow the machine.
		soakUntil := h.requests.Load() + 100
		waitFor(t, "100 more conversion requests", func() error {
			if n := h.requests.Load(); n < soakUntil {
				return fmt.Errorf("%d requests", n)
			}
			return nil
		})
		h.stop()

		t.Logf("during rotation: %d conversion requests through the API server (%d failed), "+
			"%d TLS handshakes against the injected bundles (%d failed), %d repointings of the CRDs "+
			"(%d reads refused by the restarting CRD cache, retried); API server connections per replica %d/%d",
			h.requests.Load(), h.failures.Load(), h.handshakes.Load(), h.handshakeFailures.Load(), h.repointings.Load(), h.cacheRefusals.Load(),
			lbs[0].conns[0].Load()+lbs[1].conns[0].Load(), lbs[0].conns[1].Load()+lbs[1].conns[1].Load())
		for _, e := range h.errors() {
			t.Error(e)
		}
		for _, r := range replicas {
			if err := r.rotator.ReadyCheck(nil); err != nil {
				t.Errorf("%s not ready after the rotation: %v", r.name, err)
			}
		}

		// Connections made now reach only certificates the new CA signed.
		pointWebhooksAt(t, env, "https://"+startProxy(t, replicas[0].addr, replicas[1].addr).addr)
		checkConversion(ctx, t, env, ns, tasks[1])
	})
}

// pointWebhooksAt points both CRDs' conversion webhook, and a validating
// webhook configuration named as the installation names it, at base,
// keeping whatever caBundle they have. testenv's own configuration goes.
func pointWebhooksAt(t *testing.T, env *testenv.Env, base string) {
	t.Helper()
	ctx := t.Context()
	if err := pointCRDsAt(ctx, env, base); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vwc := &admissionv1.ValidatingWebhookConfiguration{}
		err := env.Client.Get(ctx, client.ObjectKey{Name: installWebhookConfig}, vwc)
		if apierrors.IsNotFound(err) {
			if err := env.Client.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, vwc); err != nil {
				return err
			}
			if err := env.Client.Delete(ctx, vwc.DeepCopy()); err != nil {
				return err
			}
			vwc.ObjectMeta = metav1.ObjectMeta{Name: installWebhookConfig}
			for i := range vwc.Webhooks {
				vwc.Webhooks[i].ClientConfig = admissionv1.WebhookClientConfig{}
			}
		} else if err != nil {
			return err
		}
		for i := range vwc.Webhooks {
			vwc.Webhooks[i].ClientConfig.URL, vwc.Webhooks[i].ClientConfig.Service = ptr.To(base+validation.Path), nil
		}
		if vwc.ResourceVersion == "" {
			return env.Client.Create(ctx, vwc)
		}
		return env.Client.Update(ctx, vwc)
	})
	if err != nil {
		t.Fatalf("pointing the validating webhook configuration at %s: %v", base, err)
	}
}

// pointCRDsAt points both CRDs' conversion webhook at base, keeping their caBundle.
func pointCRDsAt(ctx context.Context, env *testenv.Env, base string) error {
	for _, name := range crdNames {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			cc := crd.Spec.Conversion.Webhook.ClientConfig
			cc.URL, cc.Service = ptr.To(base+"/convert"), nil
			return env.Client.Update(ctx, crd)
		})
		if err != nil {
			return fmt.Errorf("pointing CRD %s at %s: %w", name, base, err)
		}
	}
	return nil
}

// hammer reads v1alpha1 objects through the API server, which converts each
// one through the replicas; repoints the CRDs between two proxies, each time
// making the API server connect anew and so check the served certificate
// against the CRD's caBundle; and connects to each replica itself, trusting
// only what the CRDs and webhook configuration trust at that moment.
type hammer struct {
	requests, failures, handshakes, handshakeFailures, repointings atomic.Int64
	// cacheRefusals counts reads the API server refused before converting
	// anything: each repointing changes the CRD, which restarts its cache.
	cacheRefusals atomic.Int64

	mu     sync.Mutex
	errs   []string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startHammer(env *testenv.Env, ns string, tasks []string, replicas []*replica, lbs []*proxy) *hammer {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hammer{cancel: cancel}
	for w := range 4 {
		h.wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				var err error
				if i%2 == 0 {
					err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tasks[(w+i)%len(tasks)]}, &v1alpha1.Task{})
				} else {
					err = env.Client.List(ctx, &v1alpha1.TaskRunList{}, client.InNamespace(ns))
				}
				if ctx.Err() != nil {
					return
				}
				if cacheReinitializing(err) {
					h.cacheRefusals.Add(1)
					continue
				}
				h.requests.Add(1)
				if err != nil {
					h.failures.Add(1)
					h.record("conversion request: %v", err)
				}
			}
		})
	}
	h.wg.Go(func() {
		for i := 1; ctx.Err() == nil; i++ {
			if err := pointCRDsAt(ctx, env, "https://"+lbs[i%len(lbs)].addr); err != nil {
				if ctx.Err() == nil {
					h.record("%v", err)
				}
				return
			}
			h.repointings.Add(1)
			time.Sleep(500 * time.Millisecond)
		}
	})
	h.wg.Go(func() {
		for ctx.Err() == nil {
			bundles, err := injectedBundles(ctx, env)
			if err != nil {
				if ctx.Err() == nil {
					h.record("reading the injected CA bundles: %v", err)
				}
				return
			}
			for _, b := range bundles {
				for _, r := range replicas {
					h.handshakes.Add(1)
					if err := handshake(r.addr, []byte(b)); err != nil {
						h.handshakeFailures.Add(1)
						h.record("handshake with %s: %v", r.name, err)
					}
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	return h
}

// cacheReinitializing reports whether the API server refused a read because
// the CRD's watch cache is starting again after a change to the CRD, which
// it answers with 429 or 503 before any object reaches conversion.
func cacheReinitializing(err error) bool {
	return (apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)) &&
		strings.Contains(err.Error(), "storage is (re)initializing")
}

func (h *hammer) record(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) < 10 {
		h.errs = append(h.errs, fmt.Sprintf(format, args...))
	}
}

func (h *hammer) errors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.errs
}

func (h *hammer) stop() {
	h.cancel()
	h.wg.Wait()
}
