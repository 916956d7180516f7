// Package manifests_test checks what `kubectl apply -f dist/install.yaml`
// installs: config/default and the config/certmanager variant as kubectl's
// kustomize renders them, and the generated RBAC role.
package manifests_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
)

// TestInstallRunsHighlyAvailable checks config/default's Deployment: two
// replicas with leader election, each keeping its own certificate, probes,
// a disruption budget, and a shutdown that lets in-flight calls finish.
func TestInstallRunsHighlyAvailable(t *testing.T) {
	m := manifests.Render(t, "default")
	var d appsv1.Deployment
	m.One(t, "Deployment", &d)
	c := manager(t, &d)

	if r := *d.Spec.Replicas; r < 2 {
		t.Errorf("replicas = %d, want at least 2", r)
	}
	for _, arg := range []string{"--leader-elect", "--cert-management=self", "--metrics-bind-address=:8443"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("manager args %q lack %s", c.Args, arg)
		}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	}) {
		t.Error("POD_NAMESPACE is not set from the Pod's namespace; the manager would not find its certificate Secret")
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", p)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", p)
	}
	if u := d.Spec.Strategy.RollingUpdate; u == nil || u.MaxUnavailable == nil || u.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update %+v, want maxUnavailable 0", u)
	}

	preStop := time.Duration(0)
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Error("no preStop sleep: a terminating replica would close its port while the API server still calls it")
	} else {
		preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	shutdown := 30 * time.Second
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--graceful-shutdown-timeout="); ok {
			var err error
			if shutdown, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; grace <= preStop+shutdown {
		t.Errorf("terminationGracePeriodSeconds %s leaves no room after preStop %s and graceful shutdown %s", grace, preStop, shutdown)
	}

	var pdb policyv1.PodDisruptionBudget
	m.One(t, "PodDisruptionBudget", &pdb)
	if !selects(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the manager's Pods %v", pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || pdb.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
		t.Errorf("PodDisruptionBudget minAvailable %v, want at least 1 and fewer than the %d replicas", pdb.Spec.MinAvailable, *d.Spec.Replicas)
	}

	var secret corev1.Secret
	m.One(t, "Secret", &secret)
	if secret.Namespace != d.Namespace || len(secret.Data)+len(secret.StringData) != 0 {
		t.Errorf("certificate Secret %s/%s with %d keys; want it empty, in the manager's namespace %s",
			secret.Namespace, secret.Name, len(secret.Data), d.Namespace)
	}
}

// TestInstallMeetsRestrictedPodSecurity checks the manager's Pod against the
// restricted Pod Security Standard, which its namespace enforces.
func TestInstallMeetsRestrictedPodSecurity(t *testing.T) {
	m := manifests.Render(t, "default")
	var ns corev1.Namespace
	m.One(t, "Namespace", &ns)
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace %s enforces Pod Security %q, want restricted", ns.Name, got)
	}
	var d appsv1.Deployment
	m.One(t, "Deployment", &d)
	pod := d.Spec.Template.Spec
	c := manager(t, &d)
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the manager container has no securityContext")
	}
	checks := map[string]bool{
		"runs as non-root": pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot ||
			sc.RunAsNonRoot != nil && *sc.RunAsNonRoot,
		"seccomp RuntimeDefault": pod.SecurityContext != nil && pod.SecurityContext.SeccompProfile != nil &&
			pod.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault,
		"no privilege escalation":     sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
		"read-only root filesystem":   sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
		"all capabilities dropped":    sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0,
		"not privileged":              sc.Privileged == nil || !*sc.Privileged,
		"no host namespaces":          !pod.HostNetwork && !pod.HostPID && !pod.HostIPC,
		"no hostPath volumes":         !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.HostPath != nil }),
		"one container, no sidecars":  len(pod.Containers) == 1 && len(pod.InitContainers) == 0,
		"image set by the installer":  strings.HasPrefix(c.Image, "ghcr.io/minitask-dev/minitask:"),
		"the service account it owns": pod.ServiceAccountName != "" && slices.Contains(m.Names("ServiceAccount"), pod.ServiceAccountName),
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("the manager's Pod fails: %s", what)
		}
	}
}

// TestInstallWiresWebhooksAndRBAC checks that the CRDs and the webhook
// configuration call the webhook Service, that the Service reaches the
// manager's webhook port, and that every role is bound to the manager.
func TestInstallWiresWebhooksAndRBAC(t *testing.T) {
	m := manifests.Render(t, "default")
	var d appsv1.Deployment
	m.One(t, "Deployment", &d)
	var svc corev1.Service
	for _, o := range m.All("Service") {
		if strings.Contains(o.GetName(), "webhook") {
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &svc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("webhook Service %q selector %v does not select the manager's Pods", svc.Name, svc.Spec.Selector)
	}
	if !slices.ContainsFunc(manager(t, &d).Ports, func(p corev1.ContainerPort) bool {
		return len(svc.Spec.Ports) == 1 && p.ContainerPort == svc.Spec.Ports[0].TargetPort.IntVal
	}) {
		t.Errorf("webhook Service %q targets no port of the manager", svc.Name)
	}

	var refs []*admissionv1.ServiceReference
	for _, o := range m.All("CustomResourceDefinition") {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &crd); err != nil {
			t.Fatal(err)
		}
		s := crd.Spec.Conversion.Webhook.ClientConfig.Service
		refs = append(refs, &admissionv1.ServiceReference{Namespace: s.Namespace, Name: s.Name})
	}
	var vwc admissionv1.ValidatingWebhookConfiguration
	m.One(t, "ValidatingWebhookConfiguration", &vwc)
	for _, w := range vwc.Webhooks {
		refs = append(refs, w.ClientConfig.Service)
	}
	for _, ref := range refs {
		if ref == nil || ref.Namespace != svc.Namespace || ref.Name != svc.Name {
			t.Errorf("a webhook clientConfig calls %+v, want Service %s/%s", ref, svc.Namespace, svc.Name)
		}
	}

	bound := map[string]bool{}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		for _, o := range m.All(kind) {
			var b rbacv1.RoleBinding
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			for _, s := range b.Subjects {
				if s.Kind == "ServiceAccount" && s.Name == d.Spec.Template.Spec.ServiceAccountName && s.Namespace == d.Namespace {
					bound[b.RoleRef.Kind+" "+b.RoleRef.Name] = true
				}
			}
		}
	}
	for _, r := range roles(t, m) {
		// metrics-reader is for whatever scrapes /metrics, not for the manager.
		if !bound[r.id] && !strings.HasSuffix(r.id, "metrics-reader") {
			t.Errorf("%s is bound to no subject the manager runs as", r.id)
		}
	}
}

// TestCertManagerOverlay checks config/certmanager: cert-manager issues the
// certificate and injects the CA, and the manager reads the Secret it mounts.
func TestCertManagerOverlay(t *testing.T) {
	m := manifests.Render(t, "certmanager")
	if n := len(m.All("Secret")); n != 0 {
		t.Errorf("%d Secrets; cert-manager makes the certificate Secret", n)
	}
	var serving struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			SecretName string   `json:"secretName"`
			DNSNames   []string `json:"dnsNames"`
		} `json:"spec"`
	}
	for _, o := range m.All("Certificate") {
		if isCA, _, _ := unstructured.NestedBool(o.Object, "spec", "isCA"); !isCA {
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &serving); err != nil {
				t.Fatal(err)
			}
		}
	}
	if serving.Spec.SecretName == "" {
		t.Fatal("no serving Certificate")
	}
	if want := "minitask-webhook-service.minitask-system.svc"; !slices.Contains(serving.Spec.DNSNames, want) {
		t.Errorf("serving Certificate dnsNames %q lack %s", serving.Spec.DNSNames, want)
	}
	injectFrom := serving.Metadata.Namespace + "/" + serving.Metadata.Name
	for _, kind := range []string{"CustomResourceDefinition", "ValidatingWebhookConfiguration"} {
		for _, o := range m.All(kind) {
			if got := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != injectFrom {
				t.Errorf("%s %s: cert-manager.io/inject-ca-from = %q, want %q", kind, o.GetName(), got, injectFrom)
			}
		}
	}

	var d appsv1.Deployment
	m.One(t, "Deployment", &d)
	c := manager(t, &d)
	certPath := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--webhook-cert-path="); ok {
			certPath = v
		}
	}
	if !slices.Contains(c.Args, "--cert-management=none") || certPath == "" {
		t.Fatalf("manager args %q, want --cert-management=none and --webhook-cert-path", c.Args)
	}
	mounted := ""
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == certPath {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == vm.Name && v.Secret != nil {
					mounted = v.Secret.SecretName
				}
			}
		}
	}
	if mounted != serving.Spec.SecretName {
		t.Errorf("%s mounts Secret %q, want the serving Certificate's %q", certPath, mounted, serving.Spec.SecretName)
	}
	var base appsv1.Deployment
	manifests.Render(t, "default").One(t, "Deployment", &base)
	if got, want := withoutCertArgs(c.Args), withoutCertArgs(manager(t, &base).Args); !slices.Equal(got, want) {
		t.Errorf("manager args besides the certificate's: %q, want config/default's %q", got, want)
	}
}

// TestCertManagerOverlayDropsTheCertificateRBAC checks that with cert-manager
// the manager's ClusterRole loses what only keeping its own certificate needs
// (updating the CRDs and the validating webhook configuration, which
// cert-manager's cainjector does there) and nothing else.
func TestCertManagerOverlayDropsTheCertificateRBAC(t *testing.T) {
	grants := func(m manifests.Manifest) []string {
		var out []string
		for _, r := range roles(t, m) {
			if r.id == "ClusterRole minitask-manager-role" {
				out = append(out, r.grants()...)
			}
		}
		slices.Sort(out)
		return out
	}
	want := slices.DeleteFunc(grants(manifests.Render(t, "default")), func(g string) bool {
		return g == "apiextensions.k8s.io customresourcedefinitions update" ||
			strings.HasPrefix(g, "admissionregistration.k8s.io validatingwebhookconfigurations ")
	})
	if diff := cmp.Diff(want, grants(manifests.Render(t, "certmanager"))); diff != "" {
		t.Errorf("config/certmanager's manager ClusterRole (-want +got), as \"group resource verb\":\n%s", diff)
	}
}

func withoutCertArgs(args []string) []string {
	return slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		return strings.HasPrefix(a, "--cert-management=") || strings.HasPrefix(a, "--webhook-cert-path=")
	})
}

func manager(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return &d.Spec.Template.Spec.Containers[i]
		}
	}
	t.Fatalf("Deployment %s has no manager container", d.Name)
	return nil
}

func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}
