// Package runpod is the Pod contract of a TaskRun: the one Pod that runs a
// run's attempt. Build turns a run, its Task and the facts of its namespace
// into that Pod.
//
// Everything here is pure: no client and no clock. The controller (package
// controllers) reads the cluster, hands in what it read and the time, decides
// what the run does, and writes. The names the Pod is made of (its name,
// labels, step containers, annotations, volumes) are internal/runstate's,
// shared with kubectl task; a script step's command is internal/stepscript's.
package runpod
