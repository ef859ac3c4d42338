package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// inputLine is one line of a batch's input file (OpenAI's request input object).
type inputLine struct {
	CustomID *string         `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// eachLine calls fn with every line of file's bytes off to end that holds more than
// blanks: its index among those lines (from first), its offset and its bytes, without the
// line's end. It reads one chunk and one line at a time.
func eachLine(ctx context.Context, s Store, file string, off, end int64, first int, fn func(i int, at int64, line []byte) error) error {
	br := bufio.NewReaderSize(newChunkReader(ctx, s, file, off, end), 64<<10)
	i := first
	for {
		raw, err := br.ReadBytes('\n')
		at := off
		off += int64(len(raw))
		if line := bytes.TrimSpace(raw); len(line) > 0 {
			if ferr := fn(i, at, line); ferr != nil {
				return ferr
			}
			i++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// validate reads batch b's input file, checks every line as OpenAI does (failed, with the
// errors, when one is wrong), cuts the lines into parts and starts the batch.
func (r *Runner) validate(ctx context.Context, b *batchRec) error {
	var f fileRec
	_, err := load(ctx, r.Store, b.Batch.InputFileID, "file", &f)
	if llm.KindOf(err) == llm.NotFound {
		return r.fail(ctx, b, []batchError{{Code: "invalid_file", Message: "The input file no longer exists."}})
	} else if err != nil {
		return err
	}
	var (
		parts []part
		errs  []batchError
		ids   = map[string]bool{}
		lines int
	)
	bad := func(i int, code, param, format string, args ...any) {
		if len(errs) < 10 {
			line := i + 1
			e := batchError{Code: code, Message: fmt.Sprintf(format, args...), Line: &line}
			if param != "" {
				e.Param = &param
			}
			errs = append(errs, e)
		}
	}
	err = eachLine(ctx, r.Store, f.File.ID, 0, f.File.Bytes, 0, func(i int, at int64, raw []byte) error {
		lines = i + 1
		if i%PartLines == 0 {
			parts = append(parts, part{Line: i, Off: at})
		}
		parts[len(parts)-1].End = at + int64(len(raw))
		var l inputLine
		switch {
		case json.Unmarshal(raw, &l) != nil:
			bad(i, "invalid_json_line", "", "This line is not parseable as valid JSON.")
		case l.CustomID == nil || *l.CustomID == "":
			bad(i, "missing_required_parameter", "custom_id", "Missing required parameter: 'custom_id'.")
		case ids[*l.CustomID]:
			bad(i, "duplicate_custom_id", "custom_id", "The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.")
		case l.Method != http.MethodPost:
			bad(i, "invalid_method", "method", "The method must be POST, got '%.32s'.", l.Method)
		case l.URL != b.Batch.Endpoint:
			bad(i, "invalid_url", "url", "The URL provided for this request does not match the batch endpoint.")
		case len(l.Body) == 0 || l.Body[0] != '{':
			bad(i, "invalid_request", "body", "The body of this request must be a JSON object.")
		}
		if l.CustomID != nil {
			ids[*l.CustomID] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case lines == 0:
		errs = []batchError{{Code: "empty_file", Message: "The batch input file is empty."}}
	case lines > MaxLines:
		errs = []batchError{{Code: "too_many_requests", Message: fmt.Sprintf("The batch has %d requests, more than the limit of %d.", lines, MaxLines)}}
	}
	if len(errs) > 0 {
		return r.fail(ctx, b, errs)
	}
	rec, err := json.Marshal(parts)
	if err != nil {
		return err
	}
	if err := r.Store.Put(ctx, partsID(b.Batch.ID), rec); err != nil {
		return err
	}
	_, _, err = update(ctx, r.Store, b.Batch.ID, func(c *batchRec) error {
		if c.Batch.Status != "validating" || c.Lease != b.Lease {
			return errChanged // cancelled meanwhile, or another runner took over
		}
		c.Batch.stamp("in_progress", r.now().Unix())
		c.Batch.RequestCounts.Total, c.Parts, c.Lease = int64(lines), len(parts), 0
		return nil
	})
	return err
}

// fail ends batch b as failed with the validation errors errs.
func (r *Runner) fail(ctx context.Context, b *batchRec, errs []batchError) error {
	r.release(ctx, b) // no line ran: before the status says so
	_, ok, err := update(ctx, r.Store, b.Batch.ID, func(c *batchRec) error {
		if c.Batch.Status != "validating" || c.Lease != b.Lease {
			return errChanged
		}
		c.Batch.stamp("failed", r.now().Unix())
		c.Batch.Errors, c.Lease = &batchErrors{Object: "list", Data: errs}, 0
		return nil
	})
	if ok {
		err = r.Store.Unindex(ctx, "active", b.Batch.ID)
	}
	return err
}

// errStopped ends a part whose batch no longer runs (cancelled, expired).
var errStopped = errors.New("the batch no longer runs")

// runPart runs the lines of part n of batch b that have no result yet, holding its lease
// meanwhile (hold), and finishes it. Each line's request is within the batch's budget
// holds (usage.WithHolds): it passes while they keep some, and its cost is drawn from them. Each line is looked up just before it runs: one
// answered meanwhile (by a runner that held the part before, its lease lapsed) is skipped.
func (r *Runner) runPart(ctx context.Context, b *batchRec, n int, p part) error {
	id := b.Batch.ID
	key, err := r.keyOf(ctx, b.Owner)
	if err != nil {
		return err
	}
	defer r.hold(ctx, id, n)()
	err = eachLine(ctx, r.Store, b.Batch.InputFileID, p.Off, p.End, p.Line, func(i int, _ int64, raw []byte) error {
		if live, err := r.live(ctx, id); err != nil || !live {
			return cmpErr(err, errStopped)
		}
		if done, err := r.Store.Answers(ctx, id, i, i+1); err != nil || done[0] != nil {
			return err // answered already: by a runner whose lease lapsed
		}
		if err := r.wait(ctx, b.Alias); err != nil {
			return err
		}
		res, t, err := r.dispatch(usage.WithHolds(ctx, b.Holds), key, id+":"+strconv.Itoa(i), raw)
		if err != nil {
			return err
		}
		_, err = r.Store.Answer(ctx, id, i, res, t)
		return err
	})
	if err != nil && !errors.Is(err, errStopped) {
		return err
	}
	if _, ferr := r.Store.Finish(ctx, id, n); ferr != nil {
		return ferr
	}
	return err
}

// hold renews the lease of part n of batch id every third of the lease, in the background,
// until the returned stop is called: a line that runs longer than the lease (a slow model)
// keeps its part, where renewing between lines only would let the lease lapse and another
// runner run the line again. A failed renewal is tried again at the next tick; a runner
// that cannot renew (its replica cut off) loses the part when the lease lapses.
func (r *Runner) hold(ctx context.Context, id string, n int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := r.Store.Renew(ctx, id, n, r.Lease); err != nil && ctx.Err() == nil {
				r.Log.Warn("batches: renewing a part's lease", "batch", id, "part", n, "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// cmpErr is err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// keyOf is the key of owner, nil for none; a key that no longer exists is nil too (its
// lines are then refused as a request without a key would be).
func (r *Runner) keyOf(ctx context.Context, owner string) (*auth.Key, error) {
	if owner == "" || r.Key == nil {
		return nil, nil
	}
	k, err := r.Key(ctx, owner)
	if errors.Is(err, auth.ErrNotFound) {
		return nil, nil
	}
	return k, err
}

// serve runs h on req, as net/http would: a handler that aborts (panic(http.ErrAbortHandler),
// the server's answer to a request whose client left, here the runner stopping mid-line)
// ends the call, not the process.
func serve(h http.Handler, w http.ResponseWriter, req *http.Request) {
	defer func() {
		if p := recover(); p != nil && p != http.ErrAbortHandler {
			panic(p)
		}
	}()
	h.ServeHTTP(w, req)
}

// dispatch runs one line through the gateway's handler, in this process, as a request of
// key, and returns its result line (OpenAI's batch output format) and tally. The request's
// account record is line, the batch's id and the line's (usage.WithRecord): a line run
// again, its result lost with a killed replica after its charge, is charged once. It
// fails only when the runner stops (ctx): the line then stays unanswered.
func (r *Runner) dispatch(ctx context.Context, key *auth.Key, line string, raw []byte) ([]byte, Tally, error) {
	var l inputLine
	if err := json.Unmarshal(raw, &l); err != nil || l.CustomID == nil {
		return nil, Tally{}, fmt.Errorf("batch: a validated line does not decode: %v", err)
	}
	rctx := usage.WithRecord(ctx, "batch:"+line)
	if key != nil {
		rctx = auth.WithKey(rctx, key)
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, l.URL, bytes.NewReader(l.Body))
	if err != nil {
		return nil, Tally{}, err
	}
	req.RemoteAddr = "127.0.0.1:0"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sluice-batch")
	w := &recorder{h: http.Header{}}
	serve(r.handler, w, req)
	if ctx.Err() != nil {
		return nil, Tally{}, ctx.Err()
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	body := w.body.Bytes()
	if !json.Valid(body) {
		body, _ = json.Marshal(w.body.String()) // an event stream (a line that asked stream: true)
	}
	res, err := json.Marshal(resultLine{ID: newID("batch_req_"), CustomID: *l.CustomID,
		Response: &lineResponse{StatusCode: w.status, RequestID: w.h.Get("X-Request-Id"), Body: body}})
	if err != nil {
		return nil, Tally{}, err
	}
	var t Tally
	if w.status >= 200 && w.status < 300 {
		t.Completed = 1
		var u struct {
			Usage struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
				InputTokens      int64 `json:"input_tokens"`
				OutputTokens     int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(body, &u) == nil {
			t.InputTokens = u.Usage.PromptTokens + u.Usage.InputTokens
			t.OutputTokens = u.Usage.CompletionTokens + u.Usage.OutputTokens
		}
	} else {
		t.Failed = 1
	}
	return res, t, nil
}

// resultLine is one line of a batch's output or error file.
type resultLine struct {
	ID       string        `json:"id"`
	CustomID string        `json:"custom_id"`
	Response *lineResponse `json:"response"`
	Error    *lineError    `json:"error"`
}

type lineResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type lineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// recorder is the response of a line's request: its status, headers and body.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.h }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush lets the handler flush (http.NewResponseController): nothing to do.
func (w *recorder) Flush() {}

// finalize writes batch b's output file (its lines answered 2xx) and error file (the
// others, and for a cancelled or expired batch the lines it never ran), then ends it in
// its final status. A runner that lost the step meanwhile drops the files it wrote.
func (r *Runner) finalize(ctx context.Context, b *batchRec) error {
	id, final := b.Batch.ID, b.Final
	if final == "" {
		final = "completed"
	}
	out := &chunkWriter{ctx: ctx, s: r.Store, file: newID("file-")}
	bad := &chunkWriter{ctx: ctx, s: r.Store, file: newID("file-")}
	drop := func() {
		c := context.WithoutCancel(ctx)
		_ = r.Store.DropChunks(c, out.file, out.n+1)
		_ = r.Store.DropChunks(c, bad.file, bad.n+1)
	}
	var f fileRec
	_, err := load(ctx, r.Store, b.Batch.InputFileID, "file", &f)
	if err != nil && llm.KindOf(err) != llm.NotFound {
		return err
	}
	var window [][]byte
	from := 0
	err = eachLine(ctx, r.Store, f.File.ID, 0, f.File.Bytes, 0, func(i int, _ int64, raw []byte) error {
		if i-from >= len(window) {
			var err error
			from = i
			if window, err = r.Store.Answers(ctx, id, i, i+256); err != nil {
				return err
			}
		}
		res := window[i-from]
		to := bad
		if res == nil {
			var l inputLine
			_ = json.Unmarshal(raw, &l)
			e := &lineError{Code: "batch_" + final, Message: "This request was not run: the batch was " + final + " first."}
			if final == "expired" {
				e.Message = "This request could not be executed before the completion window expired."
			}
			var err error
			if res, err = json.Marshal(resultLine{ID: newID("batch_req_"), CustomID: deref(l.CustomID), Error: e}); err != nil {
				return err
			}
		} else if ok2xx(res) {
			to = out
		}
		if _, err := to.Write(append(slices.Clip(res), '\n')); err != nil {
			return err
		}
		return nil
	})
	if err == nil {
		err = errors.Join(out.flush(), bad.flush())
	}
	if err != nil {
		drop()
		return err
	}
	r.release(ctx, b) // the lines' charges are in: before the status says so
	now := r.now().Unix()
	var outID, badID *string
	for _, w := range []*chunkWriter{out, bad} {
		if w.size == 0 {
			continue
		}
		name := id + "_output.jsonl"
		if w == bad {
			name, badID = id+"_error.jsonl", &w.file
		} else {
			outID = &w.file
		}
		if err := (&Host{Store: r.Store}).put(ctx, &fileRec{Owner: b.Owner, Alias: b.Alias, Chunks: w.n,
			File: fileObject{ID: w.file, Object: "file", Bytes: w.size, CreatedAt: now, Filename: name, Purpose: "batch_output", Status: "processed"}}); err != nil {
			drop()
			return err
		}
	}
	_, ok, err := update(ctx, r.Store, id, func(c *batchRec) error {
		if c.Batch.Status != b.Batch.Status || c.Lease != b.Lease {
			return errChanged
		}
		c.Batch.stamp(final, now)
		c.Batch.OutputFileID, c.Batch.ErrorFileID, c.Lease = outID, badID, 0
		return nil
	})
	if err != nil || !ok {
		for _, fid := range []*string{outID, badID} {
			if fid != nil {
				_, _ = r.Store.Drop(context.WithoutCancel(ctx), *fid)
				_ = r.Store.Unindex(context.WithoutCancel(ctx), "files", *fid)
			}
		}
		drop()
		return err
	}
	r.forget(id)
	return r.Store.Unindex(ctx, "active", id)
}

// ok2xx reports whether a result line's response is a 2xx.
func ok2xx(res []byte) bool {
	var l struct {
		Response *struct {
			StatusCode int `json:"status_code"`
		} `json:"response"`
	}
	return json.Unmarshal(res, &l) == nil && l.Response != nil && l.Response.StatusCode >= 200 && l.Response.StatusCode < 300
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
