package manifests_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// checkServiceAccountUseCheck sends the installed manager's webhook the
// review of a user with no permission creating a TaskRun that names a
// ServiceAccount, and checks that it answers Forbidden, naming the missing
// permission: so the installed RBAC lets the manager ask the authorizer (a
// forbidden SubjectAccessReview would be an error answer, 500).
func checkServiceAccountUseCheck(t *testing.T, webhookAddr, host string, roots *x509.CertPool) {
	t.Helper()
	run := wrappers.TaskRun("default", "r", "t").ServiceAccount("builder").Obj()
	run.SetGroupVersionKind(v1.GroupVersion.WithKind("TaskRun"))
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "1",
			Kind:      metav1.GroupVersionKind{Group: "minitask.dev", Version: "v1", Kind: "TaskRun"},
			Resource:  metav1.GroupVersionResource{Group: "minitask.dev", Version: "v1", Resource: "taskruns"},
			Name:      run.Name,
			Namespace: run.Namespace,
			Operation: admissionv1.Create,
			UserInfo:  authenticationv1.UserInfo{Username: "nobody", Groups: []string{"system:authenticated"}},
			Object:    runtime.RawExtension{Raw: raw},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Post("https://"+webhookAddr+validation.TaskRunPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", validation.TaskRunPath, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || review.Response == nil {
		t.Fatalf("POST %s: %s, no AdmissionReview (%v)", validation.TaskRunPath, resp.Status, err)
	}
	r := review.Response
	want := `needs "use" on serviceaccounts "builder" or "create" on pods`
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusForbidden || !strings.Contains(r.Result.Message, want) {
		t.Errorf("the installed manager answered %+v, want a 403 refusal saying %s", r, want)
	}
}
