//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The workspace sample's names (config/samples/v1beta1_*_workspace.yaml).
const (
	workspaceTask        = "build-from-source"
	workspaceSampleRun   = "build-from-source-run"
	workspaceName        = "source"
	workspaceMountPath   = "/workspace/" + workspaceName
	workspaceBoundRun    = "build-from-source-bound"
	workspaceSampleSteps = 2
)

// TestWorkspaceSample applies the workspace sample as a user would (kubectl
// apply of config/samples' Task and TaskRun) and runs it with the current
// manager: the run, which binds nothing, succeeds, and so does one that binds
// the workspace to an emptyDir. Each run's Pod gives its two step containers,
// the init container and the container, the same volume at the same path,
// and that volume is an emptyDir: what lets one step read what the other
// wrote.
func TestWorkspaceSample(t *testing.T) {
	c := newCluster(t, "workspace")
	startManager(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	samples := filepath.Join(c.repo, "config", "samples")
	for _, file := range []string{"v1beta1_task_workspace.yaml", "v1beta1_taskrun_workspace.yaml"} {
		if out, err := c.runKubectl(ctx, "apply", "-n", ns, "-f", filepath.Join(samples, file)); err != nil {
			t.Fatalf("kubectl apply -f config/samples/%s: %v\n%s", file, err, out)
		}
	}
	create(t, c, wrappers.TaskRun(ns, workspaceBoundRun, workspaceTask).
		Workspace(v1.WorkspaceBinding{Name: workspaceName, EmptyDir: &corev1.EmptyDirVolumeSource{}}).Obj())

	got := waitFinished(t, c, time.Minute, workspaceSampleRun, workspaceBoundRun)
	for _, name := range []string{workspaceSampleRun, workspaceBoundRun} {
		if outcome(got[name]) != "True/Succeeded" {
			t.Errorf("TaskRun %s ended %s (%s), want True/Succeeded", name, outcome(got[name]), runstate.Summary(got[name]))
		}
		pod := &corev1.Pod{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runstate.PodName(got[name])}, pod); err != nil {
			t.Fatalf("reading the Pod of TaskRun %s: %v", name, err)
		}
		checkSharedWorkspace(t, pod)
	}
}

// checkSharedWorkspace checks that every step container of pod mounts one
// and the same emptyDir volume at the workspace's path, writable.
func checkSharedWorkspace(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	steps := runstate.Steps(pod)
	if len(steps) != workspaceSampleSteps {
		t.Fatalf("Pod %s runs steps %+v, want the sample's %d", pod.Name, steps, workspaceSampleSteps)
	}
	containers := map[string]corev1.Container{}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			containers[c.Name] = c
		}
	}
	volume := ""
	for _, step := range steps {
		mounts := mountsAt(containers[step.Container], workspaceMountPath)
		if len(mounts) != 1 {
			t.Errorf("Pod %s: container %s has %d volumeMounts at %s, want 1: %+v",
				pod.Name, step.Container, len(mounts), workspaceMountPath, containers[step.Container].VolumeMounts)
			continue
		}
		if mounts[0].ReadOnly || mounts[0].SubPath != "" {
			t.Errorf("Pod %s: container %s mounts the workspace %+v, want the whole volume, writable", pod.Name, step.Container, mounts[0])
		}
		if volume == "" {
			volume = mounts[0].Name
		} else if mounts[0].Name != volume {
			t.Errorf("Pod %s: container %s mounts volume %s at %s, another step volume %s: the steps share no files",
				pod.Name, step.Container, mounts[0].Name, workspaceMountPath, volume)
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name != volume {
			continue
		}
		if diff := cmp.Diff(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}, v.VolumeSource); diff != "" {
			t.Errorf("Pod %s: the workspace's volume %s (-want an emptyDir +got):\n%s", pod.Name, volume, diff)
		}
		return
	}
	t.Errorf("Pod %s has no volume %q, which its steps mount; volumes: %s", pod.Name, volume, volumeNames(pod))
}

// mountsAt returns the volumeMounts of c at path.
func mountsAt(c corev1.Container, path string) []corev1.VolumeMount {
	var at []corev1.VolumeMount
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			at = append(at, m)
		}
	}
	return at
}

// volumeNames lists pod's volumes, for messages.
func volumeNames(pod *corev1.Pod) string {
	names := make([]string, len(pod.Spec.Volumes))
	for i, v := range pod.Spec.Volumes {
		names[i] = v.Name
	}
	return fmt.Sprint(names)
}
