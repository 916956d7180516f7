// Package runpod is the Pod contract of a TaskRun: the one Pod that runs a
// run's attempt, as the controller builds it and as it reads it back. Build
// turns a run, its Task and the facts of its namespace into that Pod; the
// readers turn the Pod into what the run's status says of it: its steps
// (StepStates), its results (Results), and the Succeeded condition its own
// status gives the run, once it has ended (Outcome) and while it goes on
// (Progress), down to why it waits (FindHeldStep, FailedMount).
//
// Everything here is pure: no client and no clock. The controller (package
// controllers) reads the cluster, hands in what it read and the time, decides
// what the run does (a cancel, a timeout, a retry, a hold that lasted too
// long may overrule the Pod), and writes. The names the Pod is made of (its
// name, labels, step containers, annotations, volumes) are
// internal/runstate's, shared with kubectl task; a script step's command is
// internal/stepscript's.
package runpod
