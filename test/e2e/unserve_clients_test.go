//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// This file holds what must keep working once v1alpha1 is unserved or
// removed: v1beta1 clients, the controller and kubectl task, with no error;
// and what a v1alpha1 client gets, a 404.

// checkClients checks every client of the API after a stage: a v1alpha1
// client gets a 404; v1beta1 clients apply (server-side and client-side) and
// update every object, those written through v1alpha1 included; the
// controller runs and cancels runs that kubectl task starts, lists,
// describes and prints the logs of; the manager logs no error.
func (u *unserving) checkClients(stage string) {
	u.checkV1alpha1NotFound()
	u.checkV1beta1Writes(stage)
	u.checkPlugin(stage)
	u.checkManagerLog("with v1alpha1 " + stage)
}

// checkV1alpha1NotFound checks what v1alpha1 clients get: a 404 for a
// request of the path, a NotFound error naming the resource for a typed
// client that knew the version, and kubectl refusing a v1alpha1 manifest
// naming the version.
func (u *unserving) checkV1alpha1NotFound() {
	t := u.t
	hc, err := rest.HTTPClientFor(u.c.config)
	if err != nil {
		t.Fatal(err)
	}
	// The API server's CRD handler follows the CRD within a moment.
	path := "/apis/minitask.dev/v1alpha1/namespaces/" + ns + "/tasks/" + ssaTask
	waitFor(t, 30*time.Second, "GET "+path+" to answer 404", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.c.config.Host+path, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusNotFound {
			return fmt.Errorf("%s: %s", resp.Status, body)
		}
		return nil
	})

	// The cluster's client learnt the version's mapping when it was served,
	// as a long-running client of v1alpha1 did.
	err = u.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ssaTask}, &v1alpha1.Task{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "could not find the requested resource") {
		t.Errorf("getting a Task through v1alpha1: got %v, want NotFound: the server could not find the requested resource", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	manifest := u.manifestFile("alpha.yaml", map[string]any{
		"apiVersion": "minitask.dev/v1alpha1", "kind": "Task",
		"metadata": map[string]any{"name": "too-late", "namespace": ns},
		"spec":     map[string]any{"steps": []any{map[string]any{"name": "say", "image": "alpine:3"}}},
	})
	// kubectl with a fresh discovery cache says there is no such version,
	// with one from when v1alpha1 was served it gets the API server's 404.
	out, err := u.c.runKubectl(ctx, "apply", "-f", manifest)
	if err == nil || !strings.Contains(out, `no matches for kind "Task" in version "minitask.dev/v1alpha1"`) &&
		!strings.Contains(out, "(NotFound)") {
		t.Errorf("kubectl apply of a v1alpha1 Task: got %v, %q; want it refused: no such version, or NotFound", err, out)
	}
}

// checkV1beta1Writes writes every object through v1beta1 three ways: kubectl
// apply --server-side (the field manager that applied some of them through
// v1alpha1), kubectl apply (client-side) and a merge patch, each adding a
// label. None may fail.
func (u *unserving) checkV1beta1Writes(stage string) {
	t, ctx := u.t, context.Background()
	now := u.readVersions(false, true)
	var objs []client.Object
	for _, name := range slices.Sorted(maps.Keys(now.betaTasks)) {
		objs = append(objs, now.betaTasks[name])
	}
	for _, name := range slices.Sorted(maps.Keys(now.betaRuns)) {
		objs = append(objs, now.betaRuns[name])
	}
	for _, how := range []string{"server-side", "client-side"} {
		var manifests []map[string]any
		for _, obj := range objs {
			manifests = append(manifests, betaManifest(obj, how+"-"+stage, "true"))
		}
		args := []string{"apply", "-f", u.manifestFile(how+".yaml", manifests...)}
		if how == "server-side" {
			args = append(args, "--server-side")
		}
		u.kubectl(args...)
	}
	label := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"patched-%s":"true"}}}`, stage)))
	for _, obj := range objs {
		if err := u.c.client.Patch(ctx, obj.DeepCopyObject().(client.Object), label); err != nil {
			t.Errorf("patching %s %s through v1beta1 with v1alpha1 %s: %v", kindOf(obj), obj.GetName(), stage, err)
		}
	}
}

// betaManifest is a v1beta1 manifest of obj, its name and spec, with its
// labels and label key=value.
func betaManifest(obj client.Object, key, value string) map[string]any {
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	var spec any
	switch o := obj.(type) {
	case *v1beta1.Task:
		spec = o.Spec
	case *v1beta1.TaskRun:
		spec = o.Spec
	}
	return map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": kindOf(obj),
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace(), "labels": labels},
		"spec":     spec,
	}
}

// checkPlugin runs kubectl task against the cluster: start a run and follow
// it to its success; start one and cancel it; list the runs, describe and
// print the logs of one written through v1alpha1. Each must exit 0 and say
// nothing of an error or a warning.
func (u *unserving) checkPlugin(stage string) {
	t := u.t
	run, long := "greet-"+stage, "long-"+stage
	outs := []string{
		runPlugin(t, u.c, "start", greetTaskName, "-p", "name="+stage, "--name", run, "--showlog"),
		runPlugin(t, u.c, "start", greetTaskName, "-p", "name="+stage, "-p", "pause=600", "--name", long),
	}
	u.waitReason(map[string]v1beta1.TaskRunReason{long: v1beta1.ReasonRunning})
	outs = append(outs,
		runPlugin(t, u.c, "cancel", long),
		runPlugin(t, u.c, "list"),
		runPlugin(t, u.c, "describe", ssaRun),
		runPlugin(t, u.c, "logs", ssaRun))
	for _, out := range outs {
		for _, line := range strings.Split(out, "\n") {
			if l := strings.ToLower(line); strings.Contains(l, "error") || strings.Contains(l, "warning") {
				t.Errorf("kubectl task, v1alpha1 %s, printed %q", stage, line)
			}
		}
	}
	got := waitFinished(t, u.c, time.Minute, run, long)
	want := map[string]string{run: "True/Succeeded", long: "False/TaskRunCancelled"}
	for name, w := range want {
		if o := outcome(got[name]); o != w {
			t.Errorf("TaskRun %s, started by kubectl task with v1alpha1 %s, ended %s, want %s", name, stage, o, w)
		}
	}
}

// checkManagerLog checks that the manager running now has logged no error
// since it last started.
func (r *rehearsal) checkManagerLog(when string) {
	b, err := os.ReadFile(r.m.logPath)
	if err != nil {
		r.t.Fatal(err)
	}
	log := string(b)
	log = log[strings.LastIndex(log, "=== e2e: manager start"):]
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "\tERROR\t") {
			r.t.Errorf("the manager logged an error %s: %s", when, line)
		}
	}
}
