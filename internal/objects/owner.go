package objects

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Record is what the gateway keeps of an object it passed through (dialect.Store, under
// its client id): whose it is, where it is, and what a batch of it is priced at.
type Record struct {
	Key  string `json:"k"`           // the id of the virtual key that made it ("": auth off)
	Team string `json:"t,omitempty"` // the key's team
	// Model is what the client named (an alias or provider/model), Target the
	// "provider/model" a batch of it is priced at ("": unknown).
	Model  string `json:"m,omitempty"`
	Target string `json:"g,omitempty"`
	Bytes  int64  `json:"b,omitempty"` // a file's size, a batch's estimate
	// Batch is the client id of the batch whose output or error file this is ("": none).
	Batch string `json:"o,omitempty"`
	// Holds are what a batch holds of its key's and team's budgets from its creation until
	// its charges are in (docs/files-batches.md, "Budgets"); its output file's record has
	// them too, since reading it is what charges the batch.
	Holds []usage.Hold `json:"h,omitempty"`
}

// records keeps the Records in a dialect.Store, for ttl.
type records struct {
	store dialect.Store
	ttl   time.Duration
}

// keyOf is the store key of an object's record.
func keyOf(id string) string { return "objects:" + id }

// put records id as rec's; an id recorded already keeps its first owner.
func (rs records) put(ctx context.Context, id string, rec Record) error {
	b, _ := json.Marshal(rec)
	if _, err := rs.store.Add(ctx, keyOf(id), b, rs.ttl); err != nil {
		return unavailable()
	}
	return nil
}

// owned is the record of id when key made it; another key's id, or one the gateway never
// recorded, is notFound, alike (a client cannot tell one from the other).
func (rs records) owned(ctx context.Context, id, key string, notFound error) (Record, error) {
	b, err := rs.store.Get(ctx, keyOf(id))
	if err != nil {
		return Record{}, unavailable()
	}
	var rec Record
	if b == nil || json.Unmarshal(b, &rec) != nil || rec.Key != key {
		return Record{}, notFound
	}
	return rec, nil
}

// mine reports whether key owns id (a store that cannot answer: no).
func (rs records) mine(ctx context.Context, id, key string) bool {
	_, err := rs.owned(ctx, id, key, errNo)
	return err == nil
}

// settle reports whether the result line custom of batch is settled here: true once for
// each, whoever reads it, on any replica (Store.Add). A store that cannot answer: false,
// the line is not charged twice.
func (rs records) settle(ctx context.Context, batch, custom string) bool {
	ok, err := rs.store.Add(ctx, "objects:settled:"+batch+":"+custom, []byte{1}, rs.ttl)
	return err == nil && ok
}

var errNo = &llm.Error{Kind: llm.NotFound}

// unavailable is the 503 of a store that cannot answer.
func unavailable() error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "state_unavailable", Type: "server_error",
		Message: "The gateway cannot reach its shared state to find the object. Retry shortly."}
}
