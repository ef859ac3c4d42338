package logstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// DefaultAuditMemory is how many entries AuditMemory keeps when asked for 0.
const DefaultAuditMemory = 1000

// AuditMemory is the audit log when no store is configured (logs.url is empty): the last n
// entries of this process, lost at restart and not shared between replicas. Safe for
// concurrent use.
type AuditMemory struct {
	mu   sync.Mutex
	n    int
	ring []AuditEntry // up to n, oldest overwritten first
	next int          // where the next entry goes once the ring is full
}

var _ AuditStore = (*AuditMemory)(nil)

// NewAuditMemory keeps the last n entries (0: DefaultAuditMemory).
func NewAuditMemory(n int) *AuditMemory {
	if n <= 0 {
		n = DefaultAuditMemory
	}
	return &AuditMemory{n: n}
}

func (m *AuditMemory) WriteAudit(_ context.Context, e AuditEntry) error {
	e, err := prepareAudit(e)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.ring {
		if x.ID == e.ID {
			return nil // stored once, as the SQL stores do
		}
	}
	if len(m.ring) < m.n {
		m.ring = append(m.ring, e)
		return nil
	}
	m.ring[m.next] = e
	m.next = (m.next + 1) % m.n
	return nil
}

func (m *AuditMemory) QueryAudit(_ context.Context, f AuditFilter) (AuditPage, error) {
	var after *keyset
	if f.Cursor != "" {
		k, err := decodeCursor(f.Cursor)
		if err != nil {
			return AuditPage{}, badFilter("cursor", "cursor: not a cursor this API gave")
		}
		after = &k
	}
	m.mu.Lock()
	es := slices.Clone(m.ring)
	m.mu.Unlock()
	slices.SortFunc(es, func(a, b AuditEntry) int { // newest first, as the SQL stores' keyset
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID))
	})
	n := limitOf(f.Limit)
	out := es[:0]
	for _, e := range es {
		switch {
		case !f.From.IsZero() && e.Time.Before(f.From), !f.To.IsZero() && !e.Time.Before(f.To),
			f.User != "" && e.User != f.User, f.ResourceKind != "" && e.ResourceKind != f.ResourceKind,
			f.ResourceID != "" && e.ResourceID != f.ResourceID:
			continue
		case after != nil && cmp.Or(e.Time.Compare(after.Time), cmp.Compare(e.ID, after.ID)) >= 0:
			continue // not after the cursor
		}
		if out = append(out, e); len(out) > n {
			break
		}
	}
	return auditPage(out, n), nil
}
