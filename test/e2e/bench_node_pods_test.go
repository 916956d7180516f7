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
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The runs BenchmarkNodeStepCost times: the same steps (a Task of N script
// steps, each `true`) as a TaskRun, and as bare Pods of the shapes a step
// could take. The bare Pods carry no minitask label, so the controller
// leaves them alone.

// stepImage is the steps' image: on the real node, a busybox-static
// stand-in for alpine:3 (node_cluster_test.go names the node's images).
const stepImage = alpineImage

// stepCostRun is one way to run a Task's steps, named by the benchmark's
// run= key.
type stepCostRun struct {
	name string
	// object is what is created for one run of task, named name.
	object func(name string, task *v1.Task) client.Object
}

var stepCostRuns = []stepCostRun{
	// (a) minitask: the controller makes the Pod below and reports the run.
	{"taskrun", func(name string, task *v1.Task) client.Object {
		return wrappers.TaskRun(ns, name, task.Name).Obj()
	}},
	// (b) the Pod the controller makes, without the controller.
	{"init-containers", initContainersPod},
	// (c) every step's command, one after another, in one container.
	{"one-container", oneContainerPod},
	// (d) every step a regular container that waits for the one before,
	// as Tekton's entrypoint does, in images with a shell.
	{"chained", chainedPod},
	// (e) the same for images without a shell: an init container copies a
	// static binary (busybox) that each step then runs its wait in.
	{"chained-copied", chainedCopiedPod},
}

// stepTask is a Task of n script steps that run `true`.
func stepTask(n int) *v1.Task {
	w := wrappers.Task(ns, fmt.Sprintf("steps-%d", n))
	for i := range n {
		w.Step(fmt.Sprintf("s%d", i+1), stepImage, "true")
	}
	return w.Obj()
}

// stepContainers are task's step containers as the controller makes them
// for a Task of script steps without results or workspaces
// (internal/runpod/build.go, containerForStep): the step's image, and
// its script inside internal/stepscript's wrapper.
func stepContainers(task *v1.Task) []corev1.Container {
	protocol := stepscript.ProtocolFor(task)
	containers := make([]corev1.Container, len(task.Spec.Steps))
	for i, step := range task.Spec.Steps {
		containers[i] = corev1.Container{Name: runstate.StepContainer(step.Name), Image: step.Image,
			Command: stepscript.Command(step.Script, step.OnError, protocol)}
	}
	return containers
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

// initContainersPod is the controller's Pod for task: every step but the
// last an init container, the last the container.
func initContainersPod(name string, task *v1.Task) client.Object {
	pod := barePod(name)
	containers := stepContainers(task)
	last := len(containers) - 1
	if last > 0 {
		pod.Spec.InitContainers = containers[:last]
	}
	pod.Spec.Containers = containers[last:]
	return pod
}

// oneContainerPod runs every step's wrapped command, in order, in one
// container, stopping at the first that fails: what the steps cost as
// processes rather than containers.
func oneContainerPod(name string, task *v1.Task) client.Object {
	var commands []string
	for _, c := range stepContainers(task) {
		commands = append(commands, shellWords(c.Command))
	}
	pod := barePod(name)
	pod.Spec.Containers = []corev1.Container{{Name: "steps", Image: stepImage,
		Command: []string{"/bin/sh", "-c", strings.Join(commands, " &&\n")}}}
	return pod
}

// chainScript is the wait of a chained step, run by /bin/sh -c (or
// busybox's sh) with the arguments BUSYBOX WAIT POST COMMAND...: it waits
// for the step before to hand over its exit code through the FIFO WAIT,
// runs COMMAND unless that step failed, and hands its own code on through
// POST. A FIFO wakes the reader the moment the writer writes: no polling.
// Either side may make it first; the writer blocks until the reader opens
// it, so a step ends only once the next has started. BUSYBOX, when not
// empty, runs mkfifo in an image that has no mkfifo of its own.
const chainScript = `bb=$1 wait=$2 post=$3
shift 3
code=0
if [ -n "$wait" ]; then
	$bb mkfifo "$wait" 2>/dev/null
	read -r code <"$wait"
fi
if [ "$code" = 0 ]; then
	"$@"
	code=$?
else
	echo "minitask-chain: skipped: a step before failed" >&2
fi
if [ -n "$post" ]; then
	$bb mkfifo "$post" 2>/dev/null
	echo "$code" >"$post"
fi
exit "$code"
`

// chainDir is where chained steps meet: an emptyDir every step mounts.
const chainDir = "/minitask/chain"

// chainArgs are the BUSYBOX WAIT POST arguments of chainScript for step i
// of n.
func chainArgs(busybox string, i, n int) []string {
	wait, post := "", ""
	if i > 0 {
		wait = fmt.Sprintf("%s/%d", chainDir, i)
	}
	if i < n-1 {
		post = fmt.Sprintf("%s/%d", chainDir, i+1)
	}
	return []string{busybox, wait, post}
}

// chainedPod runs every step as a regular container, all started at once,
// each waiting for the one before (chainScript) and then running the
// step's wrapped command.
func chainedPod(name string, task *v1.Task) client.Object {
	pod := barePod(name)
	pod.Spec.Volumes = []corev1.Volume{emptyDir("chain")}
	containers := stepContainers(task)
	for i := range containers {
		c := &containers[i]
		c.Command = append(append([]string{"/bin/sh", "-c", chainScript, "minitask-chain"},
			chainArgs("", i, len(containers))...), c.Command...)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "chain", MountPath: chainDir}}
	}
	pod.Spec.Containers = containers
	return pod
}

// copyContainer is chainedCopiedPod's init container, which runs no step.
const copyContainer = "copy-entrypoint"

// chainedCopiedPod is chainedPod for steps in an image without a shell, as
// Tekton runs them: an init container copies a static binary (here
// busybox, standing in for Tekton's entrypoint) into an emptyDir that each
// step runs its wait from. Each step runs `/steptool exit 0`, a command
// step (a script needs the image's /bin/sh).
func chainedCopiedPod(name string, task *v1.Task) client.Object {
	const toolsDir, busybox = "/minitask/tools", "/minitask/tools/busybox"
	pod := barePod(name)
	pod.Spec.Volumes = []corev1.Volume{emptyDir("chain"), emptyDir("tools")}
	tools := corev1.VolumeMount{Name: "tools", MountPath: toolsDir}
	pod.Spec.InitContainers = []corev1.Container{{Name: copyContainer, Image: stepImage,
		Command: []string{"/bin/cp", "/bin/busybox", busybox}, VolumeMounts: []corev1.VolumeMount{tools}}}
	n := len(task.Spec.Steps)
	for i, step := range task.Spec.Steps {
		command := append(append([]string{busybox, "sh", "-c", chainScript, "minitask-chain"},
			chainArgs(busybox, i, n)...), "/steptool", "exit", "0")
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: runstate.StepContainer(step.Name), Image: noShellImage, Command: command,
			VolumeMounts: []corev1.VolumeMount{{Name: "chain", MountPath: chainDir}, tools}})
	}
	return pod
}

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
