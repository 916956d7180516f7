// Package rundecision decides what happens next to a TaskRun. Given what a
// reconcile read (the run, its current attempt's Pod, what that Pod's node
// makes of it, its Task, what holds the Pod back, the API server's answer to
// a Pod's creation, and the time), it says how the run stands (an Outcome:
// its Succeeded condition), whether the Pod is stopped, whether the run moves
// on to another attempt, the status to write, and when to look again.
//
// It is pure: no client and no clock (internal/testing/purity holds it to
// that), so that every row of docs/lifecycle.md's condition table, and every
// fault and retry, is a table test. The controller (controllers/) reads the
// cluster, hands what it read to these functions in the order a reconcile
// takes (Attempt's stages), and writes what they decided. What the Pod
// itself says (its steps, results and the condition it gives the run) is
// internal/runpod's; what a node says of its Pods is internal/nodefault's.
package rundecision
