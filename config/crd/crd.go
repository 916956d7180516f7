// Package crd holds minitask's CustomResourceDefinitions as controller-gen
// writes them into bases/, the same files config/crd installs, so that the
// manager can judge objects by the very schemas the API server enforces.
package crd

import "embed"

// Bases holds bases/minitask.dev_tasks.yaml and bases/minitask.dev_taskruns.yaml.
//
//go:embed bases/minitask.dev_tasks.yaml bases/minitask.dev_taskruns.yaml
var Bases embed.FS

// The files in Bases, one CustomResourceDefinition each.
const (
	TasksFile    = "bases/minitask.dev_tasks.yaml"
	TaskRunsFile = "bases/minitask.dev_taskruns.yaml"
)
