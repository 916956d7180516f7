package runcache

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// endedResultsPod is the Pod "run-pod" of run "run" for a Task of n script
// steps that declares the results version and digest, every step ended with
// code 0 and the termination message messages gives it, by step.
func endedResultsPod(n int, messages map[int]string) *corev1.Pod {
	task := wrappers.Task("ns", "t").Results("version", "digest")
	for i := range n {
		task.Step(fmt.Sprintf("s%d", i), "alpine", "true")
	}
	pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task.Obj(), runpod.Inputs{Name: "run-pod"})
	if err != nil {
		panic(err)
	}
	status := wrappers.PodStatus(pod).At(testTime).Succeeded()
	for i, message := range messages {
		status.Ended(i, 0, message)
	}
	pod.Status = status.Obj()
	return pod
}

// withSidecar is pod, ended, with a native sidecar "db" put first, as
// release 7 builds it, still running.
func withSidecar(pod *corev1.Pod) *corev1.Pod {
	withDB := wrappers.WithSidecars(pod, "db")
	statuses := []corev1.ContainerStatus{{Name: "sidecar-db", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	withDB.Status.InitContainerStatuses = append(statuses, withDB.Status.InitContainerStatuses...)
	withDB.Status.Phase = corev1.PodRunning
	return withDB
}
