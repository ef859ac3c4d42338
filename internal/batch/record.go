package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// fileObject is OpenAI's file object, as GET /v1/files/{id} answers it.
type fileObject struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Bytes         int64   `json:"bytes"`
	CreatedAt     int64   `json:"created_at"`
	ExpiresAt     *int64  `json:"expires_at"`
	Filename      string  `json:"filename"`
	Purpose       string  `json:"purpose"`
	Status        string  `json:"status"`
	StatusDetails *string `json:"status_details"`
}

// fileRec is a file as stored: its object, and what only the host sees.
type fileRec struct {
	File   fileObject `json:"file"`
	Owner  string     `json:"owner,omitempty"` // the key's id that made it ("": auth off)
	Alias  string     `json:"alias"`
	Chunks int        `json:"chunks"`
}

// batchObject is OpenAI's batch object, as GET /v1/batches/{id} answers it; request_counts
// and usage are the store's tally when it is shown.
type batchObject struct {
	ID               string          `json:"id"`
	Object           string          `json:"object"`
	Endpoint         string          `json:"endpoint"`
	Errors           *batchErrors    `json:"errors"`
	InputFileID      string          `json:"input_file_id"`
	CompletionWindow string          `json:"completion_window"`
	Status           string          `json:"status"`
	OutputFileID     *string         `json:"output_file_id"`
	ErrorFileID      *string         `json:"error_file_id"`
	CreatedAt        int64           `json:"created_at"`
	InProgressAt     *int64          `json:"in_progress_at"`
	ExpiresAt        *int64          `json:"expires_at"`
	FinalizingAt     *int64          `json:"finalizing_at"`
	CompletedAt      *int64          `json:"completed_at"`
	FailedAt         *int64          `json:"failed_at"`
	ExpiredAt        *int64          `json:"expired_at"`
	CancellingAt     *int64          `json:"cancelling_at"`
	CancelledAt      *int64          `json:"cancelled_at"`
	RequestCounts    requestCounts   `json:"request_counts"`
	Usage            *batchUsage     `json:"usage,omitempty"`
	Metadata         json.RawMessage `json:"metadata"`
}

type requestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

type batchErrors struct {
	Object string       `json:"object"`
	Data   []batchError `json:"data"`
}

// batchError is one validation error of an input file, its line counted from 1.
type batchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    *int    `json:"line"`
}

type batchUsage struct {
	InputTokens         int64          `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int64          `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int64          `json:"total_tokens"`
}

// batchRec is a batch as stored: its object, and the run's own fields.
type batchRec struct {
	Batch batchObject `json:"batch"`
	Owner string      `json:"owner,omitempty"`
	Alias string      `json:"alias"`
	// Parts is how many parts its lines were cut into, once validated.
	Parts int `json:"parts,omitempty"`
	// Lease (unix ms) is until when a runner holds the batch's current step (validating,
	// finalizing, cancelling); Final is the status finalizing ends in.
	Lease int64  `json:"lease,omitempty"`
	Final string `json:"final,omitempty"`
	// Holds are what the batch holds of its key's and team's budgets (usage.Hold, taken at
	// its creation, given with the creation's context): its lines run within them, and
	// they are released when it ends (Runner.Budgets).
	Holds []usage.Hold `json:"holds,omitempty"`
}

// part is a run of lines of the input file: its first line's index, and its bytes.
type part struct {
	Line int   `json:"l"`
	Off  int64 `json:"o"`
	End  int64 `json:"e"`
}

// partsID is where a batch's parts are kept.
func partsID(batch string) string { return batch + ":parts" }

// show is b's object with its tally.
func (b *batchRec) show(t Tally) *batchObject {
	o := b.Batch
	o.RequestCounts.Completed, o.RequestCounts.Failed = t.Completed, t.Failed
	if t.InputTokens+t.OutputTokens > 0 {
		o.Usage = &batchUsage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, TotalTokens: t.InputTokens + t.OutputTokens,
			InputTokensDetails: map[string]int{"cached_tokens": 0}, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}}
	}
	return &o
}

// stamp sets the time of status on o.
func (o *batchObject) stamp(status string, at int64) {
	o.Status = status
	p := &at
	switch status {
	case "in_progress":
		o.InProgressAt = p
	case "finalizing":
		o.FinalizingAt = p
	case "completed":
		o.CompletedAt = p
	case "failed":
		o.FailedAt = p
	case "expired":
		o.ExpiredAt = p
	case "cancelling":
		o.CancellingAt = p
	case "cancelled":
		o.CancelledAt = p
	}
}

// terminal reports whether status is a batch's last.
func terminal(status string) bool {
	switch status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// newID is prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// load decodes the record id into v; a NotFound error of what when there is none.
func load(ctx context.Context, s Store, id, what string, v any) ([]byte, error) {
	raw, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, notFound(what, id)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("batch: record %s: %w", id, err)
	}
	return raw, nil
}

// errChanged ends an update whose function found nothing to change.
var errChanged = errors.New("unchanged")

// update changes the batch record id with fn, compare-and-set, and returns it as written.
// fn returns errChanged to leave the record as it is (update then returns it and false).
func update(ctx context.Context, s Store, id string, fn func(*batchRec) error) (*batchRec, bool, error) {
	for range 64 {
		var b batchRec
		old, err := load(ctx, s, id, "batch", &b)
		if err != nil {
			return nil, false, err
		}
		if err := fn(&b); errors.Is(err, errChanged) {
			return &b, false, nil
		} else if err != nil {
			return nil, false, err
		}
		rec, err := json.Marshal(&b)
		if err != nil {
			return nil, false, err
		}
		if ok, err := s.Swap(ctx, id, old, rec); err != nil {
			return nil, false, err
		} else if ok {
			return &b, true, nil
		}
	}
	return nil, false, fmt.Errorf("batch: record %s kept changing during an update", id)
}

// invalid is a 400 in OpenAI's shape.
func invalid(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// notFound is OpenAI's 404 for an unknown id.
func notFound(what, id string) *llm.Error {
	msg := "No such File object: " + id
	if what == "batch" {
		msg = "No batch found with id '" + id + "'."
	}
	return &llm.Error{Kind: llm.NotFound, Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found", Message: msg}
}
