package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// parseLabels reads the values of start's -l flags, each KEY=VALUE, into
// the run's labels, refusing what the API server would refuse, so that the
// message names the flag rather than metadata.labels.
func parseLabels(cmd *cobra.Command, flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		key, value, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return nil, usageErrorf(cmd, "malformed -l %q: it needs key=value, e.g. -l team=build", f)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, usageErrorf(cmd, "malformed -l %q: its key: %s", f, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, usageErrorf(cmd, "malformed -l %q: its value: %s", f, strings.Join(errs, "; "))
		}
		if _, dup := out[key]; dup {
			return nil, usageErrorf(cmd, "-l %s is given twice; give each label once", key)
		}
		out[key] = value
	}
	return out, nil
}

// parseSelector reads list's -l, a label selector as kubectl takes it:
// team=build, env!=prod, tier in (a,b), !draft.
func parseSelector(cmd *cobra.Command, selector string) (labels.Selector, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, usageErrorf(cmd, "malformed -l %q: %s", selector, oneLine(err.Error()))
	}
	return sel, nil
}

// labelLines shows labels one key=value a line, sorted, as kubectl describe does.
func labelLines(l map[string]string) []string {
	if len(l) == 0 {
		return []string{none}
	}
	lines := make([]string, 0, len(l))
	for _, key := range slices.Sorted(maps.Keys(l)) {
		lines = append(lines, fmt.Sprintf("%s=%s", key, l[key]))
	}
	return lines
}
