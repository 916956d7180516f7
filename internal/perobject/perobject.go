// Package perobject serves the passes that write many objects one at a time,
// the storage migration and the time repair: what they keep of the objects
// they could not write, and how they tell one object's refusal from an API
// server that cannot serve at all.
package perobject

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Failures are the objects a pass could not write, each with its error.
type Failures map[types.NamespacedName]error

// Keys returns the objects sorted, so that messages and retries are stable.
func (f Failures) Keys() []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return keys
}

// maxNamed is how many failures Named names; the count, the log line of
// each failure and the passes' metrics give the rest.
const maxNamed = 3

// Named returns the errors of the first objects, in Keys' order, each after
// "; ", and how many more there are: the tail of an error message that
// counts the failures.
func (f Failures) Named() string {
	var b strings.Builder
	for i, key := range f.Keys() {
		if i == maxNamed {
			fmt.Fprintf(&b, "; and %d more", len(f)-maxNamed)
			break
		}
		fmt.Fprintf(&b, "; %v", f[key])
	}
	return b.String()
}

// Unservable reports whether err says that the API server could not serve
// the request at all (unreachable, overloaded, timed out, or the context
// ended) rather than refused this object: every other write of the pass
// would fail the same way, so the pass stops, and a later one starts again,
// instead of waiting out the same error for each of thousands of objects.
func Unservable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
}
