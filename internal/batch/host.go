package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// DefaultMaxBytes bounds an upload when the host sets no limit: OpenAI's limit of a batch
// input file.
const DefaultMaxBytes = 200 << 20

// Host is the files and batches of one alias with batch: emulate, served as OpenAI's API
// (llm.ObjectHost): what it stores is the Store's, which every replica reads. A caller
// whose context carries a key (auth.KeyFrom) sees only what that key made; another key's
// id is unknown (404). A batch made here is run by the Runner of the same Store. Safe for
// concurrent use; read-only once built.
type Host struct {
	Store Store
	// Alias is the alias the host serves: its objects are its own, another alias's host
	// does not know them.
	Alias string
	// MaxBytes bounds an upload (0: DefaultMaxBytes).
	MaxBytes int64
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

var _ llm.ObjectHost = (*Host)(nil)

// Endpoints are the batch endpoints a line may call: the gateway's routes a batch of
// OpenAI's may name.
var Endpoints = []string{"/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/moderations"}

// Object answers one call of OpenAI's files and batches API; paths are relative to /v1.
func (h *Host) Object(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	seg := strings.Split(strings.Trim(call.Path, "/"), "/")
	m := call.Method
	switch {
	case len(seg) == 1 && seg[0] == "files" && m == http.MethodPost:
		return h.upload(ctx, call)
	case len(seg) == 1 && seg[0] == "files" && m == http.MethodGet:
		return h.listFiles(ctx, call)
	case len(seg) == 2 && seg[0] == "files" && m == http.MethodGet:
		f, _, err := h.file(ctx, seg[1])
		if err != nil {
			return nil, err
		}
		return answer(f.File)
	case len(seg) == 2 && seg[0] == "files" && m == http.MethodDelete:
		return h.deleteFile(ctx, seg[1])
	case len(seg) == 3 && seg[0] == "files" && seg[2] == "content" && m == http.MethodGet:
		f, _, err := h.file(ctx, seg[1])
		if err != nil {
			return nil, err
		}
		return &llm.ObjectAnswer{Status: http.StatusOK, ContentType: "application/octet-stream",
			Body: io.NopCloser(newChunkReader(ctx, h.Store, f.File.ID, 0, f.File.Bytes))}, nil
	case len(seg) == 1 && seg[0] == "batches" && m == http.MethodPost:
		return h.create(ctx, call)
	case len(seg) == 1 && seg[0] == "batches" && m == http.MethodGet:
		return h.listBatches(ctx, call)
	case len(seg) == 2 && seg[0] == "batches" && m == http.MethodGet:
		b, err := h.batch(ctx, seg[1])
		if err != nil {
			return nil, err
		}
		return h.showBatch(ctx, b)
	case len(seg) == 3 && seg[0] == "batches" && seg[2] == "cancel" && m == http.MethodPost:
		return h.cancel(ctx, seg[1])
	}
	return nil, &llm.Error{Kind: llm.NotFound, Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: "Invalid URL (" + m + " /v1/" + strings.Trim(call.Path, "/") + ")"}
}

func (h *Host) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// owner is the id of the key ctx carries ("": none, auth is off).
func owner(ctx context.Context) string {
	if k := auth.KeyFrom(ctx); k != nil {
		return k.ID
	}
	return ""
}

// file is the file id, if the caller may see it.
func (h *Host) file(ctx context.Context, id string) (*fileRec, []byte, error) {
	var f fileRec
	if !strings.HasPrefix(id, "file-") {
		return nil, nil, notFound("file", id)
	}
	raw, err := load(ctx, h.Store, id, "file", &f)
	if err != nil {
		return nil, nil, err
	}
	if f.Alias != h.Alias || f.Owner != owner(ctx) {
		return nil, nil, notFound("file", id)
	}
	return &f, raw, nil
}

// batch is the batch id, if the caller may see it.
func (h *Host) batch(ctx context.Context, id string) (*batchRec, error) {
	var b batchRec
	if !strings.HasPrefix(id, "batch_") || strings.Contains(id, ":") {
		return nil, notFound("batch", id)
	}
	if _, err := load(ctx, h.Store, id, "batch", &b); err != nil {
		return nil, err
	}
	if b.Alias != h.Alias || b.Owner != owner(ctx) {
		return nil, notFound("batch", id)
	}
	return &b, nil
}

func (h *Host) showBatch(ctx context.Context, b *batchRec) (*llm.ObjectAnswer, error) {
	t, err := h.Store.Tally(ctx, b.Batch.ID)
	if err != nil {
		return nil, err
	}
	return answer(b.show(t))
}

func (h *Host) deleteFile(ctx context.Context, id string) (*llm.ObjectAnswer, error) {
	f, _, err := h.file(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := h.Store.Drop(ctx, id); err != nil {
		return nil, err
	}
	if err := h.Store.Unindex(ctx, "files", id); err != nil {
		return nil, err
	}
	if err := h.Store.DropChunks(ctx, id, f.Chunks); err != nil {
		return nil, err
	}
	return answer(map[string]any{"id": id, "object": "file", "deleted": true})
}

// page is a list's page as OpenAI pages it: newest first, from after on, at most limit.
type page[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	FirstID any    `json:"first_id"`
	LastID  any    `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

// limitOf reads the limit query parameter (def when absent, 1 to hi).
func limitOf(call llm.ObjectCall, def, hi int) (int, error) {
	v := call.Query.Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > hi {
		return 0, invalid("limit", "Invalid 'limit': expected an integer between 1 and %d, got '%s'.", hi, v)
	}
	return n, nil
}

// list pages the ids of list, each shown by show (false: not the caller's, left out).
// An order other than asc or desc (newest first, the default) is a 400.
func list[T any](ctx context.Context, h *Host, call llm.ObjectCall, name string, limit int, show func(id string) (T, string, bool, error)) (*llm.ObjectAnswer, error) {
	order := call.Query.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		return nil, invalid("order", "Invalid value for 'order': '%.64s'. Supported values are: 'asc' and 'desc'.", order)
	}
	ids, err := h.Store.Indexed(ctx, name)
	if err != nil {
		return nil, err
	}
	if order == "asc" {
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	after := call.Query.Get("after")
	p := page[T]{Object: "list", Data: []T{}}
	skipping := after != ""
	for _, id := range ids {
		if skipping {
			skipping = id != after
			continue
		}
		v, got, ok, err := show(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if len(p.Data) == limit {
			p.HasMore = true
			break
		}
		if p.FirstID == nil {
			p.FirstID = got
		}
		p.Data, p.LastID = append(p.Data, v), got
	}
	return answer(p)
}

func (h *Host) listFiles(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	limit, err := limitOf(call, 10000, 10000)
	if err != nil {
		return nil, err
	}
	purpose := call.Query.Get("purpose")
	return list(ctx, h, call, "files", limit, func(id string) (fileObject, string, bool, error) {
		f, _, err := h.file(ctx, id)
		if llm.KindOf(err) == llm.NotFound {
			return fileObject{}, "", false, nil
		}
		if err != nil {
			return fileObject{}, "", false, err
		}
		return f.File, id, purpose == "" || f.File.Purpose == purpose, nil
	})
}

func (h *Host) listBatches(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	limit, err := limitOf(call, 20, 100)
	if err != nil {
		return nil, err
	}
	return list(ctx, h, call, "batches", limit, func(id string) (*batchObject, string, bool, error) {
		b, err := h.batch(ctx, id)
		if llm.KindOf(err) == llm.NotFound {
			return nil, "", false, nil
		}
		if err != nil {
			return nil, "", false, err
		}
		t, err := h.Store.Tally(ctx, id)
		return b.show(t), id, err == nil, err
	})
}

// createBody is POST /v1/batches's.
type createBody struct {
	InputFileID      string          `json:"input_file_id"`
	Endpoint         string          `json:"endpoint"`
	CompletionWindow string          `json:"completion_window"`
	Metadata         json.RawMessage `json:"metadata"`
}

// create records a batch, validating: the runner validates its input file and runs it.
// The budget holds ctx carries (usage.WithHolds) are the batch's.
func (h *Host) create(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	if call.Body == nil {
		return nil, invalid("", "We could not parse the JSON body of your request.")
	}
	raw, err := io.ReadAll(io.LimitReader(call.Body, 1<<20+1))
	if err != nil {
		return nil, err
	}
	var q createBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	if len(raw) > 1<<20 || dec.Decode(&q) != nil {
		return nil, invalid("", "We could not parse the JSON body of your request.")
	}
	switch {
	case q.InputFileID == "":
		return nil, invalid("input_file_id", "Missing required parameter: 'input_file_id'.")
	case q.Endpoint == "":
		return nil, invalid("endpoint", "Missing required parameter: 'endpoint'.")
	case !slices.Contains(Endpoints, q.Endpoint):
		return nil, invalid("endpoint", "Invalid value: '%s'. Supported values are: %s.", q.Endpoint, strings.Join(Endpoints, ", "))
	case q.CompletionWindow != "24h":
		return nil, invalid("completion_window", "Invalid value: '%s'. Supported values are: '24h'.", q.CompletionWindow)
	}
	meta := json.RawMessage("null")
	if len(q.Metadata) > 0 && string(q.Metadata) != "null" {
		var m map[string]string
		if json.Unmarshal(q.Metadata, &m) != nil || len(m) > 16 {
			return nil, invalid("metadata", "Invalid 'metadata': expected an object of at most 16 string values.")
		}
		meta = q.Metadata
	}
	f, _, err := h.file(ctx, q.InputFileID)
	if llm.KindOf(err) == llm.NotFound {
		return nil, invalid("input_file_id", "Invalid 'input_file_id': '%s'. No such file.", q.InputFileID)
	} else if err != nil {
		return nil, err
	}
	if f.File.Purpose != "batch" {
		return nil, invalid("input_file_id", "The input file's purpose must be 'batch', not '%s'.", f.File.Purpose)
	}
	now := h.now().Unix()
	expires := now + 24*3600
	b := batchRec{Owner: owner(ctx), Alias: h.Alias, Holds: usage.HoldsOf(ctx), Batch: batchObject{ID: newID("batch_"), Object: "batch", Endpoint: q.Endpoint,
		InputFileID: q.InputFileID, CompletionWindow: q.CompletionWindow, Status: "validating", CreatedAt: now,
		ExpiresAt: &expires, Metadata: meta}}
	rec, err := json.Marshal(&b)
	if err != nil {
		return nil, err
	}
	if err := h.Store.Put(ctx, b.Batch.ID, rec); err != nil {
		return nil, err
	}
	if err := h.Store.Index(ctx, "batches", b.Batch.ID, now); err != nil {
		return nil, err
	}
	if err := h.Store.Index(ctx, "active", b.Batch.ID, now); err != nil {
		return nil, err
	}
	return answer(b.show(Tally{}))
}

// cancel asks the runners to stop a batch: cancelling, then cancelled once no part is
// running, with the results so far.
func (h *Host) cancel(ctx context.Context, id string) (*llm.ObjectAnswer, error) {
	if _, err := h.batch(ctx, id); err != nil {
		return nil, err
	}
	b, _, err := update(ctx, h.Store, id, func(b *batchRec) error {
		switch b.Batch.Status {
		case "validating", "in_progress":
			b.Batch.stamp("cancelling", h.now().Unix())
			b.Lease = 0
			return nil
		case "cancelling", "cancelled":
			return errChanged
		}
		return invalid("", "Cannot cancel a batch with status '%s'.", b.Batch.Status)
	})
	if err != nil {
		return nil, err
	}
	return h.showBatch(ctx, b)
}

// answer is a 200 with v as JSON.
func answer(v any) (*llm.ObjectAnswer, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &llm.ObjectAnswer{Status: http.StatusOK, ContentType: "application/json", Body: io.NopCloser(bytes.NewReader(b))}, nil
}
