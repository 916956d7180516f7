//go:build e2e && e2enode

package e2e

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The runs BenchmarkNodeStepCost times: the same steps (a Task of N script
// steps of one kind) as a TaskRun, in each Pod shape the manager builds, and
// as bare Pods: the floor, the controller's init-container Pod, and Tekton's
// shape. The bare Pods carry no minitask label, so the controller leaves
// them alone.

// stepImage is the steps' image: on the real node, a busybox-static
// stand-in for alpine:3 (node_cluster_test.go names the node's images).
const stepImage = alpineImage

// stepKind is what every step of a timed Task runs.
type stepKind struct {
	// name is the benchmark key's value (step=NAME) and, with its dots
	// dashes, part of the Task's and the runs' names.
	name   string
	script string
}

// stepKinds are a step that ends at once, whose cost is all hand-over, and
// one that runs a while (0.3 s, less than the kubelet's relist period), whose
// end the kubelet cannot have been waiting for.
var stepKinds = []stepKind{{"true", "true"}, {"sleep-0.3", "sleep 0.3"}}

// slug is the kind's name as a part of an object's name.
func (k stepKind) slug() string { return strings.ReplaceAll(k.name, ".", "-") }

// stepTask is a Task of n script steps of kind.
func stepTask(kind stepKind, n int) *v1.Task {
	w := wrappers.Task(ns, fmt.Sprintf("steps-%s-%d", kind.slug(), n))
	for i := range n {
		w.Step(fmt.Sprintf("s%d", i+1), stepImage, kind.script)
	}
	return w.Obj()
}

// stepCostRun is one way to run a Task's steps, named by the benchmark's
// run= key.
type stepCostRun struct {
	name string
	// podShape is the manager's --pod-shape that a TaskRun needs; empty for
	// a bare Pod, which any manager leaves alone.
	podShape string
	// onRequest runs only when BENCH_NODE_PODS names it.
	onRequest bool
	// object is what is created for one run of task, named name.
	object func(name string, task *v1.Task) client.Object
}

// floorRun and tektonRun are the runs the others are held to.
const floorRun, tektonRun = "one-container", "tekton"

var stepCostRuns = []stepCostRun{
	// minitask, the Pod's steps chained (every step a container that waits
	// for the one before, through /dev/shm), as release 7 makes them.
	{name: "taskrun-chained", podShape: runstate.PodShapeChained, object: taskRun},
	// minitask, every step but the last an init container, as release 6
	// makes them by default. On request only: it would add a fifth to the
	// benchmark's time, and costs what the bare Pod of init-containers
	// costs (the controller adds nothing a step; docs/lifecycle.md, "What a
	// step costs"), its manager restarted between the shapes.
	{name: "taskrun-init-containers", podShape: runstate.PodShapeInitContainers, onRequest: true, object: taskRun},
	// The floor: every step's command, one after another, in one container.
	{name: floorRun, object: oneContainerPod},
	// The controller's init-container Pod, without the controller.
	{name: "init-containers", object: initContainersPod},
	// Tekton's shape: two init containers, then the steps, each polling for
	// the one before's file.
	{name: tektonRun, object: tektonPod},
}

func taskRun(name string, task *v1.Task) client.Object {
	return wrappers.TaskRun(ns, name, task.Name).Obj()
}

// barePod is a Pod that runs once, with no ServiceAccount token, as the
// controller's are when the run names no ServiceAccount.
func barePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
		},
	}
}

// initContainersPod is the Pod the controller makes for task with
// --pod-shape=init-containers (every step but the last an init container),
// without the labels that would put it in the manager's cache.
func initContainersPod(name string, task *v1.Task) client.Object {
	run := wrappers.TaskRun(ns, name, task.Name).Obj()
	pod, err := runpod.Build(run, task, runpod.Inputs{Name: name})
	if err != nil {
		panic(fmt.Sprintf("building the Pod of %s: %v", name, err)) // a Task of the benchmark's own
	}
	pod.Labels = nil
	return pod
}

// oneContainerPod runs every step's wrapped command, in order, in one
// container, stopping at the first that fails: what the steps cost as
// processes rather than containers.
func oneContainerPod(name string, task *v1.Task) client.Object {
	protocol := stepscript.ProtocolFor(task)
	var commands []string
	for _, step := range task.Spec.Steps {
		commands = append(commands, shellWords(stepscript.Command(step.Script, step.OnError, stepscript.Timer{}, protocol)))
	}
	pod := barePod(name)
	pod.Spec.Containers = []corev1.Container{{Name: "steps", Image: stepImage,
		Command: []string{"/bin/sh", "-c", strings.Join(commands, " &&\n")}}}
	return pod
}

// Tekton's Pod, as tektoncd/pipeline builds it for script steps: an init
// container copies its entrypoint binary into an emptyDir (prepare), a
// second writes the steps' scripts into another (place-scripts), and every
// step is a regular container, all started at once, whose entrypoint waits
// for the step before's file (its -wait_file; .err when that step failed),
// checking for it once a second (cmd/entrypoint's waitPollingInterval,
// defaultWaitPollingInterval = time.Second), then runs the step's script and
// writes its own (-post_file). Here busybox stands in for the entrypoint and
// its sh runs the wait (tektonWait). The first step waits for no file: Tekton
// has it wait for /tekton/downward/ready, which a Pod without sidecars has
// from its creation.
const (
	tektonBinDir, tektonScriptsDir, tektonRunDir = "/tekton/bin", "/tekton/scripts", "/tekton/run"
	tektonPrepare, tektonPlaceScripts            = "prepare", "place-scripts"
)

// tektonEntrypoint is the copied busybox, which runs the applet its first
// argument names.
const tektonEntrypoint = tektonBinDir + "/busybox"

// tektonWait is a Tekton step's entrypoint, run by busybox's sh with the
// arguments WAIT POST SCRIPT: as cmd/entrypoint's realWaiter.Wait, it
// checks for WAIT (or WAIT.err) and sleeps a second until one is there,
// then runs SCRIPT unless the step before failed, and writes POST, or
// POST.err if SCRIPT failed or was skipped.
const tektonWait = `wait=$1 post=$2 script=$3
if [ -n "$wait" ]; then
	while [ ! -e "$wait" ]; do
		if [ -e "$wait.err" ]; then
			echo "skipping: a step before failed" >&2
			[ -z "$post" ] || : >"$post.err"
			exit 1
		fi
		sleep 1
	done
fi
/bin/sh "$script"
code=$?
if [ -n "$post" ]; then
	if [ "$code" = 0 ]; then : >"$post"; else : >"$post.err"; fi
fi
exit "$code"
`

func tektonPod(name string, task *v1.Task) client.Object {
	pod := barePod(name)
	pod.Spec.Volumes = []corev1.Volume{emptyDir("tekton-bin"), emptyDir("tekton-scripts"), emptyDir("tekton-run")}
	bin := corev1.VolumeMount{Name: "tekton-bin", MountPath: tektonBinDir}
	scripts := corev1.VolumeMount{Name: "tekton-scripts", MountPath: tektonScriptsDir}
	run := corev1.VolumeMount{Name: "tekton-run", MountPath: tektonRunDir}
	var place []string
	for i, step := range task.Spec.Steps {
		place = append(place, fmt.Sprintf("printf '%%s\\n' %s > %s/script-%d", shellWords([]string{step.Script}), tektonScriptsDir, i))
	}
	pod.Spec.InitContainers = []corev1.Container{
		{Name: tektonPrepare, Image: stepImage, Command: []string{"/bin/cp", "/bin/busybox", tektonEntrypoint},
			VolumeMounts: []corev1.VolumeMount{bin}},
		{Name: tektonPlaceScripts, Image: stepImage, Command: []string{"/bin/sh", "-c", strings.Join(place, "\n")},
			VolumeMounts: []corev1.VolumeMount{scripts}},
	}
	n := len(task.Spec.Steps)
	for i, step := range task.Spec.Steps {
		wait, post := "", ""
		if i > 0 {
			wait = fmt.Sprintf("%s/%d", tektonRunDir, i-1)
		}
		if i < n-1 {
			post = fmt.Sprintf("%s/%d", tektonRunDir, i)
		}
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: runstate.StepContainer(step.Name), Image: stepImage,
			Command: []string{tektonEntrypoint, "sh", "-c", tektonWait, "entrypoint",
				wait, post, fmt.Sprintf("%s/script-%d", tektonScriptsDir, i)},
			VolumeMounts: []corev1.VolumeMount{bin, scripts, run}})
	}
	return pod
}

// notSteps are the containers of the runs' Pods that run no step: the
// clock of the steps (stepClock) leaves them out.
var notSteps = []string{tektonPrepare, tektonPlaceScripts}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// shellWords quotes each word for the shell and joins them: a command line
// that runs words as they are.
func shellWords(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}
