//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// The real-node tests (make test-e2e-node) run steps in real containers: a
// kubelet built from the pinned source, containerd and runc, and the images
// hack/realnode/images builds (hack/real-node.sh). Each test group has a
// cluster of its own, and every check reads what really happened in the
// containers: their logs, the files they left, how the kubelet saw them end.

// Images of the real node (hack/realnode/images): alpine:3 is a stand-in
// with busybox's shell and commands; nonroot is the same run as nonroot
// (65532); noshell holds only /steptool.
const (
	alpineImage  = "alpine:3"
	noShellImage = "minitask.local/noshell:stand-in"
	nonRootImage = "minitask.local/nonroot:stand-in"
)

// nodePodShape is the Pod shape the real-node tests' manager builds
// (startNodeManager): chained, so that every promise they check is kept by
// chained Pods, the default since release 7, on a real kubelet; Tasks the
// chained shape cannot run fall back to init containers, as they would
// anywhere. TestNodeInitContainers keeps the default shape proven.
const nodePodShape = runstate.PodShapeChained

// startNodeManager starts the manager of a real-node test, building
// nodePodShape Pods, with extraArgs.
func startNodeManager(t testing.TB, c *cluster, extraArgs ...string) *manager {
	t.Helper()
	return startManager(t, c, append([]string{"--pod-shape=" + nodePodShape}, extraArgs...)...)
}

// wantPodShape fails the test unless run's Pod has the shape annotation
// shape ("" for none: a Pod of one step, or one built without asking for a
// shape) and, for a fallback, a reason that holds why.
func wantPodShape(t *testing.T, c *cluster, run *v1.TaskRun, shape, why string) {
	t.Helper()
	pod := runPod(t, c, run)
	if got := pod.Annotations[runstate.AnnotationPodShape]; got != shape {
		t.Errorf("TaskRun %s's Pod has shape %q (%q), want %q", run.Name, got, pod.Annotations[runstate.AnnotationPodShapeReason], shape)
	}
	if reason := pod.Annotations[runstate.AnnotationPodShapeReason]; !strings.Contains(reason, why) {
		t.Errorf("TaskRun %s's Pod's shape reason is %q, want one that says %q", run.Name, reason, why)
	}
}

// withRealNode creates the cluster with a real node instead of kwok's.
func withRealNode(args []string) []string { return append(args, "--real-node") }

// newNodeCluster creates a cluster with a real node, or skips the test with
// one line where this machine cannot run one (not Linux, not root); with
// CI=true it fails instead, as CI's machines can.
func newNodeCluster(t *testing.T, name string) *cluster {
	t.Helper()
	if why := whyNoRealNode(t); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this machine cannot run a real node: %s", why)
		}
		t.Skipf("skipping the real-node tests: %s", why)
	}
	// Cleanups run last first: this one after the cluster's deletion.
	var netns []string
	var state string
	t.Cleanup(func() { checkNothingLeft(t, state, netns) })
	c := newCluster(t, name, withRealNode)
	state = c.env["MINITASK_STATE"]
	// And this one before it: the network namespaces of the Pods, which
	// are still there, as Pods that have finished keep their sandboxes.
	t.Cleanup(func() { netns = podNetworkNamespaces(t, state) })
	return c
}

// whyNoRealNode says why this machine cannot run a real node, in
// hack/real-node.sh check's words, or nothing if it can.
func whyNoRealNode(tb testing.TB) string {
	tb.Helper()
	repo, err := testenv.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(repo, "hack/real-node.sh"), "check").CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

// podNetworkNamespaces returns the network namespaces the node's network
// plugin has given Pods (hack/realnode/cni records each one).
func podNetworkNamespaces(t *testing.T, state string) []string {
	files, _ := filepath.Glob(filepath.Join(state, "node/cni/data/netns/*"))
	var paths []string
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			paths = append(paths, strings.TrimSpace(string(b)))
		}
	}
	if len(paths) == 0 && !t.Failed() && !t.Skipped() {
		t.Errorf("the node's network plugin recorded no Pod network namespace in %s", state)
	}
	return paths
}

// checkNothingLeft fails the test if deleting the cluster left a process,
// a mount or one of the Pods' network namespaces behind.
func checkNothingLeft(t *testing.T, state string, netns []string) {
	if state == "" {
		return
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), state+"/") {
			t.Errorf("deleting the cluster left process %s: %s", filepath.Base(filepath.Dir(p)),
				strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		if strings.Contains(line, state+"/") {
			t.Errorf("deleting the cluster left a mount: %s", line)
		}
	}
	for _, ns := range netns {
		if _, err := os.Stat(ns); err == nil {
			t.Errorf("deleting the cluster left the Pod network namespace %s", ns)
		}
	}
}

// stepLog returns what step (its container in the run's current Pod) wrote,
// through the Pod logs API: the kubelet's files, read by the API server.
func stepLog(t *testing.T, c *cluster, run *v1.TaskRun, step string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		t.Fatal(err)
	}
	pod := run.Status.PodName
	if pod == "" {
		pod = runstate.PodName(run)
	}
	req := cs.CoreV1().Pods(run.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: runstate.StepContainer(step)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := req.Stream(ctx)
	if err != nil {
		t.Fatalf("reading the log of step %q of TaskRun %s (Pod %s): %v", step, run.Name, pod, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the log of step %q of TaskRun %s: %v", step, run.Name, err)
	}
	return string(b)
}

// runPod returns the run's current Pod.
func runPod(t *testing.T, c *cluster, run *v1.TaskRun) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	name := run.Status.PodName
	if name == "" {
		name = runstate.PodName(run)
	}
	if err := c.client.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: name}, pod); err != nil {
		t.Fatalf("reading Pod %s of TaskRun %s: %v", name, run.Name, err)
	}
	return pod
}

// stepStatus returns the kubelet's status of step's container in pod.
func stepStatus(pod *corev1.Pod, step string) (corev1.ContainerStatus, error) {
	for _, s := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if s.Name == runstate.StepContainer(step) {
			return s, nil
		}
	}
	return corev1.ContainerStatus{}, fmt.Errorf("Pod %s has no status for step %q", pod.Name, step)
}

// wantNeverRan fails the test unless step of run never ran its command:
// status.steps shows it never started (Waiting, or, in a run stopped by its
// timeout or a cancel, Terminated with the run's reason and no start nor
// exit code), and, in a chained Pod,
// whose step containers all run from the start, its container printed
// nothing once it ended (its wrapper waited for a turn that never came).
// It returns that container's end, nil for a Pod of init containers.
func wantNeverRan(t *testing.T, c *cluster, run *v1.TaskRun, step string) *corev1.ContainerStateTerminated {
	t.Helper()
	for _, s := range run.Status.Steps {
		if s.Name == step && (s.StartedAt != nil || s.ExitCode != nil) {
			t.Errorf("status.steps shows step %s of TaskRun %s %+v, want it never started", step, run.Name, s)
		}
	}
	if !runstate.Chained(runPod(t, c, run)) {
		return nil
	}
	// A run ends once a step fails, while its Pod's later containers may
	// still be ending.
	var ended *corev1.ContainerStateTerminated
	waitFor(t, time.Minute, fmt.Sprintf("the container of step %s of %s to end", step, run.Name), func(ctx context.Context) error {
		s, err := stepStatus(runPod(t, c, run), step)
		if err != nil {
			return err
		}
		if ended = s.State.Terminated; ended == nil {
			return fmt.Errorf("it is %+v", s.State)
		}
		return nil
	})
	if log := stepLog(t, c, run, step); log != "" {
		t.Errorf("step %s of TaskRun %s, which must never run, logged %q", step, run.Name, log)
	}
	return ended
}
