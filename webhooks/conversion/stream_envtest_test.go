package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// testObjectOverTheStreamBoundThroughAPIServer: a Task of 1.3 MB takes a
// review of its own past streamAfterBytes each way, which the handler
// streams (kube-apiserver 1.37 converts a LIST's objects one review each,
// so no other review here is that large). The API server takes the
// streamed answer, whose uid, result, kind and apiVersion come after the
// objects: the Task reads the same through v1alpha1 as converted here, and
// a v1alpha1 write keeps every v1beta1 field.
func testObjectOverTheStreamBoundThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	script := strings.Repeat("echo \"$(params.target): building part of the tree\" && make -C ./src all\n", 850)
	var steps []v1beta1.Step
	for i := range 18 {
		steps = append(steps, v1beta1.Step{Name: fmt.Sprintf("part-%02d", i), Image: "golang:1.26", Script: script, WorkingDir: "/src"})
	}
	hub := largeTask(0)
	hub.ObjectMeta = metav1.ObjectMeta{Name: "large", Namespace: env.Namespace(t)}
	hub.Spec.Steps = steps
	if data, err := json.Marshal(hub); err != nil || len(data) <= streamAfterBytes {
		t.Fatalf("the Task is %d bytes (%v), not over the %d a review streams after", len(data), err, streamAfterBytes)
	}
	mustCreate(t, hub)

	stored := &v1beta1.Task{}
	mustGet(t, client.ObjectKeyFromObject(hub), stored)
	want := &v1alpha1.Task{}
	if err := ConvertBetaTaskToAlpha(ctx, stored.DeepCopy(), want); err != nil {
		t.Fatal(err)
	}
	spoke := &v1alpha1.Task{}
	mustGet(t, client.ObjectKeyFromObject(hub), spoke)
	if diff := cmp.Diff(want.Spec, spoke.Spec); diff != "" {
		t.Errorf("v1alpha1 spec (-converted here +through the API server):\n%s", diff)
	}
	if diff := cmp.Diff(want.Annotations, spoke.Annotations); diff != "" {
		t.Errorf("v1alpha1 annotations (-converted here +through the API server):\n%s", diff)
	}

	spoke.Labels = map[string]string{"edited": "v1alpha1"}
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatalf("updating through v1alpha1: %v", err)
	}
	got := &v1beta1.Task{}
	mustGet(t, client.ObjectKeyFromObject(hub), got)
	if diff := cmp.Diff(stored.Spec, got.Spec); diff != "" || got.Labels["edited"] != "v1alpha1" {
		t.Errorf("after a v1alpha1 write, labels %v, spec (-before +after):\n%s", got.Labels, diff)
	}
	assertNoConversionAnnotation(t, got)
}
