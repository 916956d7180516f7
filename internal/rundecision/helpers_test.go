package rundecision

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These build what the decisions read: runs, their Pods as the kubelet
// reports them, their nodes, and the clock.

var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// testNodeLostTimeout is the manager's --node-lost-timeout in these tests.
const testNodeLostTimeout = time.Minute

// podOf is the Pod "run-pod" of run "run" for task.
func podOf(task *wrappers.TaskWrapper) *corev1.Pod {
	pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task.Obj(), runpod.Inputs{Name: "run-pod"})
	if err != nil {
		panic(err)
	}
	return pod
}

// threeStepPod is the Pod of run "run" for a Task with steps a, b and c.
func threeStepPod() *corev1.Pod {
	return podOf(wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true"))
}

// commandStepPod is the Pod of run "run" for a Task whose first step runs a
// command, with timeout, and whose second a script.
func commandStepPod(timeout time.Duration) *corev1.Pod {
	return podOf(wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "fetch", Image: "alpine/git", Command: []string{"git", "fetch"}, Timeout: v1.NewDuration(timeout)},
		v1.Step{Name: "build", Image: "alpine", Script: "true"},
	))
}

// endedResultsPod is the Pod of run "run" for a Task of n script steps that
// declares the results version and digest, every step ended with code 0 and
// the termination message messages gives it, by step.
func endedResultsPod(n int, messages map[int]string) *corev1.Pod {
	task := wrappers.Task("ns", "t").Results("version", "digest")
	for i := range n {
		task.Step(fmt.Sprintf("s%d", i), "alpine", "true")
	}
	pod := podOf(task)
	status := wrappers.PodStatus(pod).At(testTime).Succeeded()
	for i, message := range messages {
		status.Ended(i, 0, message)
	}
	return withStatus(pod, status.Obj())
}

func withStatus(pod *corev1.Pod, status corev1.PodStatus) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status = status
	return pod
}

// takenUp is pod as the kubelet reports it once it has taken it up, at t:
// pending, every step waiting to be made.
func takenUp(pod *corev1.Pod, t time.Time) *corev1.Pod {
	return withStatus(pod, wrappers.PodStatus(pod).At(t).Waiting(0, "ContainerCreating", "").Obj())
}

// onNode is pod bound to node n.
func onNode(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Spec.NodeName = "n"
	return pod
}

// deletedAt is pod, its deletion begun at t.
func deletedAt(pod *corev1.Pod, t time.Time) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.DeletionTimestamp = &metav1.Time{Time: t}
	return pod
}

func withPodName(run *v1.TaskRun, name string) *v1.TaskRun {
	run.Status.PodName = name
	return run
}

func withStart(run *v1.TaskRun, start time.Time) *v1.TaskRun {
	run.Status.StartTime = &metav1.Time{Time: start}
	return run
}

// withAttempts records a failed attempt of run for each Pod named.
func withAttempts(run *v1.TaskRun, pods ...string) *v1.TaskRun {
	for _, pod := range pods {
		run.Status.Attempts = append(run.Status.Attempts, v1.Attempt{PodName: pod, Reason: string(v1.ReasonPodFailed)})
	}
	return run
}

// withRetries returns run with spec.retries set, retrying what retryOn
// gives (PodFailed by default).
func withRetries(run *v1.TaskRun, retries int32, on ...v1.RetryReason) *v1.TaskRun {
	run.Spec.Retries, run.Spec.RetryOn = ptr.To(retries), on
	return run
}

// attemptOf is the attempt a reconcile of run at now starts from, its
// default timeout an hour, having found pod (nil for none).
func attemptOf(run *v1.TaskRun, pod *corev1.Pod, now time.Time) *Attempt {
	a := NewAttempt(run, now, time.Hour)
	a.Pod = pod
	return a
}

// succeeded is the outcome of a run whose Pod succeeded, every step exiting 0.
func succeeded() *Outcome {
	return &Outcome{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"}
}

// judgeNode does for a what the controller does once it has found a's Pod:
// if the Pod's node has a say (runpod.JudgedByNode), it judges node (nil:
// deleted) and hands the verdict to NodeJudged.
func judgeNode(a *Attempt, node *corev1.Node) {
	name, judged := runpod.JudgedByNode(a.Pod)
	if !judged {
		return
	}
	a.NodeJudged(nodefault.Judge(nodefault.Read(name, node), a.Pod.DeletionTimestamp != nil, a.Now, testNodeLostTimeout))
}

// endJudgement is what EndOrRetry made of an attempt: what follows, whether
// the Pod is stopped first, the outcome, and the attempts recorded (a Retry
// records the current one).
type endJudgement struct {
	Next          Next
	StopPod       bool
	Outcome       *Outcome
	WaitsForFence bool
	Attempts      []recordedAttempt
}

// recordedAttempt is what a test checks of an attempt in status.attempts.
type recordedAttempt struct {
	PodName, Reason, Message string
}

// judgeEnd asks a.EndOrRetry, records the attempt on a Retry as the
// controller does, and returns what came of it.
func judgeEnd(a *Attempt) endJudgement {
	next, stopPod := a.EndOrRetry()
	if next == Retry {
		a.RecordAttempt()
	}
	got := endJudgement{Next: next, StopPod: stopPod, Outcome: a.Outcome, WaitsForFence: a.WaitsForFence}
	for _, at := range a.Run.Status.Attempts {
		got.Attempts = append(got.Attempts, recordedAttempt{at.PodName, at.Reason, at.Message})
	}
	return got
}

// sidecarPod is the Pod of run "run", in the shape chained says, for a Task
// whose sidecar db has a readinessProbe and proxy none, before steps a, b
// and c.
func sidecarPod(chained bool) *corev1.Pod {
	ready := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready"}}}}
	task := wrappers.Task("ns", "t").Sidecars(v1.Sidecar{Name: "db", Image: "db-image", ReadinessProbe: ready}, v1.Sidecar{Name: "proxy", Image: "proxy-image"}).
		Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true").Obj()
	pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, runpod.Inputs{Name: "run-pod", Chained: chained})
	if err != nil {
		panic(err)
	}
	return pod
}
