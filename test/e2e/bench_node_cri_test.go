//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// stepClock reads, from the real node's containerd (its CRI, on the
// socket hack/local-cluster.sh env names), when a Pod's steps started and
// ended, to the nanosecond: the API's container times are whole seconds.
// The node is this machine, so containerd's clock is the benchmark's.
type stepClock struct {
	conn    *grpc.ClientConn
	runtime runtimeapi.RuntimeServiceClient
}

func newStepClock(b *testing.B, c *cluster) *stepClock {
	b.Helper()
	address := c.env["MINITASK_CONTAINERD_ADDRESS"]
	if address == "" {
		b.Fatalf("cluster %s has no MINITASK_CONTAINERD_ADDRESS: is its node real?", c.name)
	}
	conn, err := grpc.NewClient("unix://"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatalf("connecting to containerd at %s: %v", address, err)
	}
	b.Cleanup(func() { conn.Close() })
	return &stepClock{conn: conn, runtime: runtimeapi.NewRuntimeServiceClient(conn)}
}

// stepSpan is when a Pod's first step container started and its last one
// ended, as containerd recorded them.
type stepSpan struct {
	start, end time.Time
}

// span returns the stepSpan of the containers of the Pod with the given
// UID, which must all have ended, but those that run no step: notSteps, and
// the sidecars (runstate.SidecarContainerPrefix), which the run does not
// wait for and which may still run when it has ended.
func (sc *stepClock) span(ctx context.Context, pod types.UID) (stepSpan, error) {
	list, err := sc.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(pod)}}})
	if err != nil {
		return stepSpan{}, fmt.Errorf("listing the containers of Pod %s: %w", pod, err)
	}
	var s stepSpan
	for _, c := range list.Containers {
		name := c.GetMetadata().GetName()
		if slices.Contains(notSteps, name) || strings.HasPrefix(name, runstate.SidecarContainerPrefix) {
			continue
		}
		resp, err := sc.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
		if err != nil {
			return stepSpan{}, fmt.Errorf("reading container %s of Pod %s: %w", c.GetMetadata().GetName(), pod, err)
		}
		status := resp.GetStatus()
		if status.GetStartedAt() == 0 || status.GetFinishedAt() == 0 {
			return stepSpan{}, fmt.Errorf("container %s of Pod %s has not ended", c.GetMetadata().GetName(), pod)
		}
		started, finished := time.Unix(0, status.GetStartedAt()), time.Unix(0, status.GetFinishedAt())
		if s.start.IsZero() || started.Before(s.start) {
			s.start = started
		}
		if finished.After(s.end) {
			s.end = finished
		}
	}
	if s.start.IsZero() {
		return stepSpan{}, fmt.Errorf("Pod %s has no step container", pod)
	}
	return s, nil
}
