package validation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// serviceAccountWebhook is the webhook's name in the configuration.
const serviceAccountWebhook = "vtaskrun-serviceaccount.minitask.dev"

// testServiceAccountWebhookDown points the API server's calls of the
// ServiceAccount webhook, and of it alone, at an address nothing answers,
// and checks that only creates naming a ServiceAccount fail: other creates,
// updates (those of a run that names one included), status writes and
// deletes go through. It leaves the webhook unreachable: run it last.
func testServiceAccountWebhookDown(t *testing.T, env *testenv.Env, ns string) {
	ctx := context.Background()
	named := wrappers.TaskRun(ns, "down-named", "t").ServiceAccount("builder").Obj()
	if err := env.Client.Create(ctx, named); err != nil {
		t.Fatalf("creating %s while the webhook is up: %v", named.Name, err)
	}
	breakServiceAccountWebhook(t, env)

	user := impersonate(t, env, userOfBuilder)
	attempt := 0
	testenv.Eventually(t, func() (bool, string) {
		attempt++
		err := user.Create(ctx, wrappers.TaskRun(ns, fmt.Sprintf("down-refused-%d", attempt), "t").ServiceAccount("builder").Obj())
		want := fmt.Sprintf("failed calling webhook %q", serviceAccountWebhook)
		return apierrors.IsInternalError(err) && strings.Contains(err.Error(), want), fmt.Sprintf("create: %v, want an error saying %s", err, want)
	}, "the API server to find the webhook unreachable")

	if err := impersonate(t, env, runCreatorOnly).Create(ctx, wrappers.TaskRun(ns, "down-unnamed", "t").Obj()); err != nil {
		t.Errorf("creating a run that names no ServiceAccount while the webhook is down: %v", err)
	}
	patch := client.MergeFrom(named.DeepCopy())
	named.Labels = map[string]string{"edited": "during-outage"}
	if err := env.Client.Patch(ctx, named, patch); err != nil {
		t.Errorf("labeling %s while the webhook is down: %v", named.Name, err)
	}
	statusPatch := client.MergeFrom(named.DeepCopy())
	named.Status.PodName = named.Name + "-pod"
	if err := env.Client.Status().Patch(ctx, named, statusPatch); err != nil {
		t.Errorf("writing %s's status while the webhook is down: %v", named.Name, err)
	}
	if err := env.Client.Delete(ctx, named); err != nil {
		t.Errorf("deleting %s while the webhook is down: %v", named.Name, err)
	}
}

// breakServiceAccountWebhook sends the API server's calls of the
// ServiceAccount webhook to a port nothing listens on.
func breakServiceAccountWebhook(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	var configs admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := env.Client.List(ctx, &configs); err != nil {
		t.Fatal(err)
	}
	for i := range configs.Items {
		vwc := &configs.Items[i]
		for j := range vwc.Webhooks {
			if vwc.Webhooks[j].Name != serviceAccountWebhook {
				continue
			}
			vwc.Webhooks[j].ClientConfig.Service = nil
			vwc.Webhooks[j].ClientConfig.URL = ptr.To("https://127.0.0.1:1/unreachable")
			if err := env.Client.Update(ctx, vwc); err != nil {
				t.Fatalf("pointing %s at nothing: %v", serviceAccountWebhook, err)
			}
			return
		}
	}
	t.Fatalf("no webhook %s is installed", serviceAccountWebhook)
}
