//go:build e2e && e2enode

package e2e

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// The real node for the benchmarks (the e2enode build tag): clusters whose
// one node is a real kubelet, containerd and runc (hack/real-node.sh), in
// the configurations they compare; node_cluster_test.go has what they share
// with the real-node tests.

// benchNode is a configuration of the real node that a benchmark compares.
type benchNode struct {
	// name is the benchmark key's value, e.g. pleg=generic.
	name string
	// containerd is the containerd binary the node runs, its shim beside
	// it (MINITASK_NODE_CONTAINERD); empty for the one on PATH, Debian's.
	containerd string
	// featureGates are the kubelet's, as A=true,B=false
	// (MINITASK_NODE_FEATURE_GATES).
	featureGates string
	// why, when not empty, is why this machine cannot run this node.
	why string
}

// benchNodes are the real nodes BenchmarkNodeStepCost compares: the kubelet's
// defaults with Debian's containerd 1.6 (generic), whose CRI does not stream
// container events (GetContainerEvents is Unimplemented), so the kubelet
// sees a container end at its next relist, once a second; and the kubelet's
// EventedPLEG with containerd 2 (evented; hack/install-tools.sh
// containerd2), whose events ask the kubelet to relist the Pod at once.
// BENCH_NODES=NAME,... picks some of them, or generic-containerd2: the
// kubelet's defaults with containerd 2, which tells what the runtime alone
// changes.
func benchNodes(b *testing.B) []benchNode {
	b.Helper()
	repo, err := testenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := exec.Command(filepath.Join(repo, "hack/install-tools.sh"), "--print", "containerd2").Output()
	if err != nil {
		b.Fatalf("finding containerd 2: %v", err)
	}
	containerd2 := filepath.Join(strings.TrimSpace(string(dir)), "containerd")
	nodes := map[string]benchNode{
		"generic":             {name: "generic"},
		"evented":             {name: "evented", containerd: containerd2, featureGates: "EventedPLEG=true"},
		"generic-containerd2": {name: "generic-containerd2", containerd: containerd2},
	}
	names := strings.Split(cmp.Or(os.Getenv("BENCH_NODES"), "generic,evented"), ",")
	picked := make([]benchNode, 0, len(names))
	for _, name := range names {
		node, ok := nodes[name]
		if !ok {
			b.Fatalf("BENCH_NODES: no node %q; the nodes are generic, evented and generic-containerd2", name)
		}
		if _, err := os.Stat(containerd2); err != nil && node.containerd != "" {
			node.why = "no containerd 2 at " + containerd2 + ": hack/install-tools.sh containerd2 builds it"
		}
		picked = append(picked, node)
	}
	return picked
}

// skipUnlessRealNode skips b, in one line, when this machine cannot run a
// real node, with the reason hack/real-node.sh check gives.
func skipUnlessRealNode(b *testing.B) {
	b.Helper()
	if why := whyNoRealNode(b); why != "" {
		b.Skipf("no real node on this machine: %s", why)
	}
}

// newBenchNodeCluster creates a cluster named e2e-NAME whose one node is
// node, and deletes it when b ends.
func newBenchNodeCluster(b *testing.B, name string, node benchNode) *cluster {
	b.Helper()
	// hack/real-node.sh reads them at start, and at delete (the first is
	// where ctr is): b's cleanup restores them after the cluster's.
	b.Setenv("MINITASK_NODE_CONTAINERD", node.containerd)
	b.Setenv("MINITASK_NODE_FEATURE_GATES", node.featureGates)
	return newCluster(b, name, withRealNode)
}
