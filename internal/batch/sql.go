package batch

import (
	"context"

	"github.com/sluice-gw/sluice/internal/logstore"
)

// SQL is the request log database's store of batches as a Store (a gateway without Redis):
// logstore, below this package, keeps its tally as logstore.BatchTally, field for field a
// Tally.
type SQL struct{ *logstore.Batches }

var _ Store = SQL{}

// Answer implements Store.
func (s SQL) Answer(ctx context.Context, id string, line int, result []byte, t Tally) (bool, error) {
	return s.Batches.Answer(ctx, id, line, result, logstore.BatchTally(t))
}

// Tally implements Store.
func (s SQL) Tally(ctx context.Context, id string) (Tally, error) {
	t, err := s.Batches.Tally(ctx, id)
	return Tally(t), err
}
