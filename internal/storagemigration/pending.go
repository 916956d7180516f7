package storagemigration

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minitask-dev/minitask/internal/perobject"
)

// pendingObjects are what the last attempt on a CRD could not rewrite, and
// the CRD state it saw. Every other object was rewritten in that storage
// version then, and objects written since are stored in it too; so while the
// storage version and storedVersions stay the same, retrying these objects
// is enough. Once either changes, every object may need rewriting again.
type pendingObjects struct {
	storage        string
	storedVersions []string
	failed         perobject.Failures
}

func (p *pendingObjects) keys() []types.NamespacedName { return p.failed.Keys() }

// pendingFor returns what the last attempt on the CRD left to retry, nil if
// nothing or if the CRD has changed since (then a full pass is needed).
func (m *Migrator) pendingFor(crd, storage string, storedVersions []string) *pendingObjects {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pending[crd]
	if p == nil || p.storage != storage || !slices.Equal(p.storedVersions, storedVersions) {
		return nil
	}
	return p
}

func (m *Migrator) setPending(crd string, p *pendingObjects) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]*pendingObjects{}
	}
	m.pending[crd] = p
}

func (m *Migrator) forgetPending(crd string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pending, crd)
}

// IncompleteError says that some objects could not be rewritten in the
// storage version (an admission policy denying their update, say), so that
// the CRD's status.storedVersions still lists an older version.
type IncompleteError struct {
	// CRD is the CRD's name, Storage its storage version.
	CRD, Storage string
	// StoredVersions are the versions the CRD's status still lists.
	StoredVersions []string
	// Failed are the objects not rewritten, each with its error.
	Failed perobject.Failures
}

func (e *IncompleteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s not rewritten in %s, so status.storedVersions still lists %s",
		len(e.Failed), plural(len(e.Failed), "object", "objects"), e.Storage, strings.Join(e.StoredVersions, ", "))
	b.WriteString(e.Failed.Named())
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
