package apicompat

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Exception is a breaking change that was reviewed and accepted, with why.
// It must match a Problem's release, CRD, version, path and kind exactly.
type Exception struct {
	Release string `json:"release"`
	CRD     string `json:"crd"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	Kind    Kind   `json:"kind"`
	// Reason says why the change breaks nothing in practice. Required.
	Reason string `json:"reason"`
}

func (e Exception) matches(p Problem) bool {
	return e.Release == p.Release && e.CRD == p.CRD && e.Version == p.Version && e.Path == p.Path && e.Kind == p.Kind
}

// LoadExceptions reads the reviewed exceptions file; a missing file has none.
func LoadExceptions(path string) ([]Exception, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading API compatibility exceptions: %w", err)
	}
	var exceptions []Exception
	if err := yaml.UnmarshalStrict(data, &exceptions); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	for i, e := range exceptions {
		if e.Reason == "" || e.Release == "" || e.CRD == "" || e.Kind == "" {
			return nil, fmt.Errorf("%s: exception %d needs release, crd, kind and reason", path, i+1)
		}
	}
	return exceptions, nil
}

// Apply removes the problems that an exception accepts. It also returns the
// exceptions that matched nothing, so that stale ones are removed rather
// than left to excuse a later, unreviewed change.
func Apply(problems []Problem, exceptions []Exception) (remaining []Problem, unused []Exception) {
	used := make([]bool, len(exceptions))
	for _, p := range problems {
		accepted := false
		for i, e := range exceptions {
			if e.matches(p) {
				used[i], accepted = true, true
			}
		}
		if !accepted {
			remaining = append(remaining, p)
		}
	}
	for i, e := range exceptions {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return remaining, unused
}
