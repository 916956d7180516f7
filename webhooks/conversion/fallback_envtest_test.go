package conversion_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestControllerRuntimeHandlerFallback serves /convert as
// --conversion-handler=controller-runtime does, through a real API server:
// objects convert both ways with the same converters, nothing lost; and a
// stored object no typed decode takes fails the v1alpha1 LIST, which shows
// that the fallback, not the default handler (which passes it through),
// answered.
func TestControllerRuntimeHandlerFallback(t *testing.T) {
	env := testenv.ForTest(t, func(mgr ctrl.Manager) error {
		o := webhooks.DefaultOptions()
		o.ConversionHandler = conversion.HandlerControllerRuntime
		return webhooks.SetupWithOptions(mgr, o)
	})
	ctx := context.Background()
	ns := env.Namespace(t)

	task := &v1beta1.Task{
		ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: ns},
		Spec: v1beta1.TaskSpec{
			Description: "Builds the tree",
			Params:      []v1beta1.ParamSpec{{Name: "target", Default: ptr.To("all")}},
			Steps:       []v1beta1.Step{{Name: "make", Image: "golang:1", Script: "make $(params.target)"}},
		},
	}
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	spoke := &v1alpha1.Task{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(task), spoke); err != nil {
		t.Fatalf("reading the Task through v1alpha1: %v", err)
	}
	if spoke.Annotations[conversion.AnnotationConversionData] == "" {
		t.Errorf("the v1alpha1 Task has no conversion annotation: %v", spoke.Annotations)
	}
	spoke.Labels = map[string]string{"team": "a"}
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatalf("updating the Task through v1alpha1: %v", err)
	}
	hub := &v1beta1.Task{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(task), hub); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(task.Spec, hub.Spec); diff != "" || hub.Labels["team"] != "a" {
		t.Errorf("after a v1alpha1 update, labels %v, spec (-want +got):\n%s", hub.Labels, diff)
	}

	env.PutInEtcd(t, "tasks", ns, "malformed",
		[]byte(`{"apiVersion":"minitask.dev/v1beta1","kind":"Task","metadata":{"name":"malformed","namespace":"`+ns+`"},"spec":{"steps":5}}`))
	if err := env.Client.List(ctx, &v1alpha1.TaskList{}, client.InNamespace(ns)); err == nil {
		t.Error("a v1alpha1 LIST with an object no typed decode takes succeeded: the default handler answered, not controller-runtime's")
	}
}
