package certs_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// createKinds creates the objects of the given kinds, as the installation has them.
func createKinds(t *testing.T, env *testenv.Env, objs []*unstructured.Unstructured, kinds ...string) {
	t.Helper()
	for _, obj := range objs {
		if slices.Contains(kinds, obj.GetKind()) {
			if err := env.Client.Create(t.Context(), obj.DeepCopy()); err != nil {
				t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
}

// seed creates n v1beta1 Tasks and a TaskRun for each, and returns the Tasks' names.
func seed(t *testing.T, env *testenv.Env, ns string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("task-%d", i)
		task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1beta1.TaskSpec{
			Steps: []v1beta1.Step{{Name: "say", Image: "alpine:3", Script: "echo hi"}},
		}}
		run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-run"}, Spec: v1beta1.TaskRunSpec{
			TaskRef: v1beta1.TaskRef{Name: name},
		}}
		for _, obj := range []client.Object{task, run} {
			if err := env.Client.Create(t.Context(), obj); err != nil {
				t.Fatalf("creating %s: %v", obj.GetName(), err)
			}
		}
		names = append(names, name)
	}
	return names
}

// checkConversion reads a Task and lists the TaskRuns as v1alpha1, which the
// API server must convert through the webhook.
func checkConversion(ctx context.Context, t *testing.T, env *testenv.Env, ns, task string) {
	t.Helper()
	alpha := &v1alpha1.Task{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: task}, alpha); err != nil {
		t.Fatalf("reading Task %s as v1alpha1: %v", task, err)
	}
	if len(alpha.Spec.Steps) != 1 {
		t.Errorf("Task %s as v1alpha1 has %d steps, want 1", task, len(alpha.Spec.Steps))
	}
	runs := &v1alpha1.TaskRunList{}
	if err := env.Client.List(ctx, runs, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing TaskRuns as v1alpha1: %v", err)
	}
	if len(runs.Items) == 0 {
		t.Error("listing TaskRuns as v1alpha1 found none")
	}
}

func getSecret(t *testing.T, env *testenv.Env) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: installSecret}, s); err != nil {
		t.Fatalf("reading the cert Secret: %v", err)
	}
	return s
}

// editSecret changes the cert Secret as an operator would, retrying when a
// replica wrote it meanwhile.
func editSecret(t *testing.T, env *testenv.Env, edit func(*corev1.Secret)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := getSecret(t, env)
		edit(s)
		return env.Client.Update(t.Context(), s)
	})
	if err != nil {
		t.Fatalf("editing the cert Secret: %v", err)
	}
}

// injectedBundles are the distinct caBundles of both CRDs' conversion webhook
// and of every webhook in the installation's webhook configuration, decoded.
func injectedBundles(ctx context.Context, env *testenv.Env) ([]string, error) {
	var bundles []string
	add := func(b []byte) {
		if !slices.Contains(bundles, string(b)) {
			bundles = append(bundles, string(b))
		}
	}
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return nil, err
		}
		add(crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
	}
	vwc := &admissionv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: installWebhookConfig}, vwc); err != nil {
		return nil, err
	}
	for _, w := range vwc.Webhooks {
		add(w.ClientConfig.CABundle)
	}
	return bundles, nil
}

func mustInjectedBundles(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	b, err := injectedBundles(t.Context(), env)
	if err != nil {
		t.Fatalf("reading the injected CA bundles: %v", err)
	}
	return b
}

// servedCerts are the certificates the replicas serve now.
func servedCerts(t *testing.T, replicas []*replica) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	for _, r := range replicas {
		c, err := r.servedCert()
		if err != nil {
			t.Fatalf("connecting to %s: %v", r.name, err)
		}
		certs = append(certs, c)
	}
	return certs
}

func waitReady(t *testing.T, replicas []*replica) {
	t.Helper()
	waitFor(t, "both replicas to be ready", func() error {
		for _, r := range replicas {
			if err := r.rotator.ReadyCheck(nil); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
		return nil
	})
}

// waitFor polls check until it returns nil, for up to a minute.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parseCerts(bundle []byte) []*x509.Certificate {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		if block, bundle = pem.Decode(bundle); block == nil {
			return certs
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil {
			certs = append(certs, c)
		}
	}
}

func parseCert(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	certs := parseCerts(pemBytes)
	if len(certs) != 1 {
		t.Fatalf("want one certificate, found %d", len(certs))
	}
	return certs[0]
}
