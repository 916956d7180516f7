// Package nodefault reads what a Node says of the Pods bound to it: whether
// they are lost with it (the node deleted, tainted out of service, or not
// ready for longer than the manager allows), and whether they may still be
// running somewhere (a node that is only not ready may come back, or run
// on behind a network partition) or cannot (a node deleted or tainted
// node.kubernetes.io/out-of-service: Kubernetes' word that its machine is
// down, which it acts on by deleting the node's Pods for good).
//
// Everything here is pure: no client and no clock. The controller reads the
// Node (or learns that it is gone), hands it in with the time, and decides
// what the run does: end it, retry it once the old Pod is fenced, or wait.
// docs/lifecycle.md ("Node faults") says what comes of each verdict.
package nodefault

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fault is why a Pod is lost with its node, in the words of the run's
// messages and the controller's logs; None while it is not.
type Fault string

const (
	// None: the Pod is not lost (its node is ready, or not ready for less
	// than the manager allows, or the Pod is on no node).
	None Fault = ""
	// NodeDeleted: no Node of the Pod's node's name exists.
	NodeDeleted Fault = "NodeDeleted"
	// NodeOutOfService: the node is tainted node.kubernetes.io/out-of-service.
	NodeOutOfService Fault = "NodeOutOfService"
	// NodeNotReady: the node has not been ready for longer than the manager
	// allows.
	NodeNotReady Fault = "NodeNotReady"
	// PodDeletedOnNotReadyNode: the Pod is being deleted while its node is
	// not ready (the taint manager evicting it, say): no kubelet will report
	// its end, and one that comes back kills it.
	PodDeletedOnNotReadyNode Fault = "PodDeletedOnNotReadyNode"
)

// Health is what a Node says of the Pods bound to it, as read.
type Health struct {
	// Name is the node's name.
	Name string
	// Gone says that no Node of that name exists.
	Gone bool
	// OutOfService says that the node is tainted
	// node.kubernetes.io/out-of-service (any effect).
	OutOfService bool
	// Ready is the node's Ready condition: its status ("" when the node
	// reports none), the reason and message of whoever set it (the kubelet,
	// or the node lifecycle controller once the kubelet went silent), and
	// since when it holds (its lastTransitionTime); its lastHeartbeatTime
	// is left out.
	Ready corev1.NodeCondition
}

// Read returns what node, the Node named name, says of its Pods; a nil node
// is one that does not exist.
func Read(name string, node *corev1.Node) Health {
	h := Health{Name: name, Gone: node == nil}
	if node == nil {
		return h
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeOutOfService {
			h.OutOfService = true
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			h.Ready = c
			// The kubelet's heartbeat says nothing of the node's health,
			// and changes with each of its status reports.
			h.Ready.LastHeartbeatTime = metav1.Time{}
		}
	}
	return h
}

// Fenced reports whether no Pod bound to the node can still run: the node
// is deleted or tainted out of service. Only then may another attempt of a
// run whose Pod was there start (Kubernetes' own non-graceful node shutdown:
// the taint is the administrator's word that the machine is off).
func (h Health) Fenced() bool {
	return h.Gone || h.OutOfService
}

// NotReady reports whether the node exists, is not fenced, and its Ready
// condition is False or Unknown: its Pods may still run, but no kubelet
// reports on them or stops them. A node that reports no Ready condition at
// all (one registering) is given the benefit of the doubt.
func (h Health) NotReady() bool {
	return !h.Fenced() && h.Ready.Type == corev1.NodeReady && h.Ready.Status != corev1.ConditionTrue
}

// state says in words how the node stands, for a node that is NotReady:
// its Ready condition's status, since when, and who said why.
func (h Health) state() string {
	s := fmt.Sprintf("Ready is %s", h.Ready.Status)
	if !h.Ready.LastTransitionTime.IsZero() {
		s += " since " + h.Ready.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	switch {
	case h.Ready.Reason != "" && h.Ready.Message != "":
		s += ": " + h.Ready.Reason + ": " + h.Ready.Message
	case h.Ready.Reason != "":
		s += ": " + h.Ready.Reason
	case h.Ready.Message != "":
		s += ": " + h.Ready.Message
	}
	return s
}

// Verdict is what a Pod's node makes of the Pod at one moment.
type Verdict struct {
	// Node is the name of the Pod's node.
	Node string
	// Fault is why the Pod is lost with its node; None while it is not.
	Fault Fault
	// Fenced says that the Pod cannot still run: its node is deleted or
	// tainted out of service.
	Fenced bool
	// NotReady says that the node exists, unfenced, and is not ready: the
	// Pod may still run, but no kubelet reports on it or stops it.
	NotReady bool
	// LostIn, for a Pod not lost yet on a node that is not ready, is how
	// long until it counts as lost; 0 otherwise.
	LostIn time.Duration
	// Why says how the node stands, as the run's messages give it: why the
	// Pod is lost, or why its node is not ready; "" for a ready node.
	Why string
}

// Lost reports whether the Pod is lost with its node.
func (v *Verdict) Lost() bool {
	return v != nil && v.Fault != None
}

// Judge returns what h, the health of the node that pod is bound to, makes
// of pod at now, when a node that is not ready counts as lost once it has
// been so for lostAfter (0: never by time alone). deleting says that pod is
// being deleted. Only a Pod that has not ended by its kubelet's word is
// judged so: the caller leaves the others alone (runpod.EndedOnNode).
func Judge(h Health, deleting bool, now time.Time, lostAfter time.Duration) Verdict {
	v := Verdict{Node: h.Name, Fenced: h.Fenced(), NotReady: h.NotReady()}
	switch {
	case h.Gone:
		v.Fault, v.Why = NodeDeleted, "the node was deleted"
	case h.OutOfService:
		v.Fault, v.Why = NodeOutOfService, "the node is tainted "+corev1.TaintNodeOutOfService
	case !v.NotReady:
	case deleting:
		v.Fault, v.Why = PodDeletedOnNotReadyNode, "the Pod was deleted while the node is not ready ("+h.state()+")"
	default:
		v.Why = "the node is not ready (" + h.state() + ")"
		since := h.Ready.LastTransitionTime.Time
		if lostAfter <= 0 || since.IsZero() {
			// No limit, or no time to count it from: the run's own
			// timeout bounds the wait.
			break
		}
		if left := since.Add(lostAfter).Sub(now); left > 0 {
			v.LostIn = left
			break
		}
		v.Fault = NodeNotReady
		v.Why = fmt.Sprintf("the node has not been ready for longer than %s (%s)", lostAfter, h.state())
	}
	return v
}

// TolerationSeconds returns the tolerationSeconds a run's Pod gives the
// taints the node lifecycle controller puts on a node that is not ready or
// unreachable, so that the taint manager evicts the Pod as the controller
// gives it up, rather than after the cluster's default of 300 s: lostAfter
// in whole seconds, rounded up. It returns nil for a lostAfter of 0, which
// leaves the cluster's defaults.
func TolerationSeconds(lostAfter time.Duration) *int64 {
	if lostAfter <= 0 {
		return nil
	}
	seconds := int64((lostAfter + time.Second - 1) / time.Second)
	return &seconds
}
