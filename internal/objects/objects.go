// Package objects passes the files and batches APIs through to the targets that keep them
// (issue 48): OpenAI's /v1/files and /v1/batches, Anthropic's /v1/messages/batches, on any
// llm.ObjectHost (OpenAI, Azure, Anthropic adapters; an emulated host registered by name).
// It picks the host of a new object, encodes the host in the ids clients see (Encode),
// keeps who owns each object (dialect.Store: any replica answers), streams uploads in and
// contents out, and accounts a batch's usage, at the batch price, as its results are read,
// each result line once. The server hands it the routes of dialect.Object.
package objects

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/batches"
	"github.com/sluice-gw/sluice/internal/dialect/files"
	"github.com/sluice-gw/sluice/internal/dialect/msgbatches"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Place is where the objects of a model are kept: the host's name (a provider's name, or
// "emulate/<alias>" for a host the gateway runs), the host, and the target
// ("provider/model") whose price a batch of the model pays ("": unknown).
type Place struct {
	Name   string
	Host   llm.ObjectHost
	Target string
}

// Hosts finds the hosts of objects. The gateway implements it (Directory).
type Hosts interface {
	// For is the place of model's new objects (an alias or "provider/model") of OpenAI's
	// files and batches, or of Anthropic's message batches when messages; an error in the
	// wire's shape when no target of it keeps them (404) or model is unknown.
	For(ctx context.Context, model string, messages bool) (Place, error)
	// Host is the host named name (an id's), nil when there is none (any more).
	Host(name string) llm.ObjectHost
}

// DefaultMaxUpload is the largest upload when the configuration names none: OpenAI's.
const DefaultMaxUpload = 512 << 20

// DefaultTTL is how long an object's record is kept when the configuration names none.
const DefaultTTL = 30 * 24 * time.Hour

// Service serves the routes of dialect.Object. Read-only once built; safe for concurrent
// use.
type Service struct {
	Hosts Hosts
	// State keeps the objects' records (nil Store: every id is unknown, nothing is made).
	State dialect.State
	// TTL is how long a record lasts (0: DefaultTTL).
	TTL time.Duration
	// Model is the model whose host keeps an object when the request names none: for
	// OpenAI's wires, and Anthropic's ("": the request must name one).
	Model, AnthropicModel string
	// MaxUpload is the largest upload to model's host (0 or nil: DefaultMaxUpload).
	MaxUpload func(model string) int64
	Log       *slog.Logger
}

// Call is one request of a dialect.Object route.
type Call struct {
	W   http.ResponseWriter
	R   *http.Request
	In  dialect.Input // Route, Method, Param, Key
	T   *admit.Ticket // the request's
	Rec *telemetry.Access
}

// Serve answers r, a request of the dialect.Object route route (its path's parameters
// param) by key (nil: auth off), whose access record is rec: admitted by p (a ticket per
// request, settled with what the request cost whatever came of it, for the request log
// and the account). An error before the answer started is answered by reject, in the
// route's wire's shape; a failure after it cuts the stream.
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, param func(string) string, route string, key *auth.Key,
	rec *telemetry.Access, p *admit.Policy, reject func(error) error) error {
	t := p.Ticket(key, time.Now())
	if key != nil { // a host the gateway runs (batch.Host) sees the caller's objects only
		r = r.WithContext(auth.WithKey(r.Context(), key))
	}
	sw := &statusWriter{ResponseWriter: w}
	err := s.serve(Call{W: sw, R: r, In: dialect.Input{Op: dialect.Object, Param: param, Route: route, Method: r.Method, Key: rec.KeyID},
		T: t, Rec: rec})
	status := sw.status
	if err != nil {
		status, err = llm.HTTPStatus(err), reject(err)
	}
	t.Settle(context.WithoutCancel(r.Context()), rec, status)
	return err
}

// statusWriter keeps the status of the answer it writes.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serve answers c, or returns the error to answer.
func (s *Service) serve(c Call) error {
	if s == nil || !s.State.On() || s.Hosts == nil {
		return notFound("The files and batches API is off: the gateway keeps no state (see docs/files-batches.md).")
	}
	ctx := c.R.Context()
	switch c.In.Method + " " + c.In.Route {
	case "POST " + files.Path:
		return s.upload(ctx, c)
	case "GET " + files.Path:
		return s.list(ctx, c, FilePrefix, "files", s.Model)
	case "GET " + files.One, "DELETE " + files.One:
		return s.one(ctx, c, FilePrefix, "files", "", fileMissing)
	case "GET " + files.Content:
		return s.content(ctx, c)
	case "POST " + batches.Path:
		return s.createBatch(ctx, c)
	case "GET " + batches.Path:
		return s.list(ctx, c, BatchPrefix, "batches", s.Model)
	case "GET " + batches.One:
		return s.one(ctx, c, BatchPrefix, "batches", "", batchMissing)
	case "POST " + batches.Cancel:
		return s.one(ctx, c, BatchPrefix, "batches", "/cancel", batchMissing)
	case "POST " + msgbatches.Path:
		return s.createMsgBatch(ctx, c)
	case "GET " + msgbatches.Path:
		return s.list(ctx, c, MsgBatchPrefix, "messages/batches", s.AnthropicModel)
	case "GET " + msgbatches.One, "DELETE " + msgbatches.One:
		return s.one(ctx, c, MsgBatchPrefix, "messages/batches", "", msgBatchMissing)
	case "POST " + msgbatches.Cancel:
		return s.one(ctx, c, MsgBatchPrefix, "messages/batches", "/cancel", msgBatchMissing)
	case "GET " + msgbatches.Results:
		return s.results(ctx, c)
	}
	return dialect.RouteError(http.StatusNotFound, c.In.Method, c.R.URL.Path)
}

// records is the service's record keeper.
func (s *Service) records() records {
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return records{store: s.State.Store, ttl: ttl}
}

// owned finds the caller's object of the route's id: its record, host and upstream id;
// missing (the wire's 404) for an id the gateway did not make, another key's, or one
// whose host is gone.
func (s *Service) owned(ctx context.Context, c Call, prefix string, missing func(id string) error) (Record, llm.ObjectHost, string, error) {
	id := c.In.Param("id")
	name, up, ok := Decode(prefix, id)
	if !ok {
		return Record{}, nil, "", missing(id)
	}
	rec, err := s.records().owned(ctx, id, c.In.Key, missing(id))
	if err != nil {
		return Record{}, nil, "", err
	}
	h := s.Hosts.Host(name)
	if h == nil {
		return Record{}, nil, "", missing(id)
	}
	c.Rec.Model, c.Rec.Target = rec.Model, name
	return rec, h, up, nil
}

// one passes a call of one object through (get, delete, cancel): its answer's ids
// rewritten; a deleted object's record goes.
func (s *Service) one(ctx context.Context, c Call, prefix, path, suffix string, missing func(id string) error) error {
	rec, h, up, err := s.owned(ctx, c, prefix, missing)
	if err != nil {
		return err
	}
	a, err := h.Object(ctx, llm.ObjectCall{Method: c.In.Method, Path: path + "/" + up + suffix})
	if err != nil {
		return upstreamError(err, missing(c.In.Param("id")))
	}
	name, _, _ := Decode(prefix, c.In.Param("id"))
	if err := s.relayJSON(ctx, c, a, rewriter{s: s, name: name, prefix: prefix, owner: rec, base: baseURL(c.R), t: c.T}); err != nil {
		return err
	}
	if c.In.Method == http.MethodDelete {
		_, _ = s.State.Store.Delete(ctx, keyOf(c.In.Param("id")))
	}
	return nil
}

// list passes a list through from the host of the request's model (its query's model, its
// X-Sluice-Model header, else def): only the caller's objects are shown; the cursors are
// the gateway's ids both ways.
func (s *Service) list(ctx context.Context, c Call, prefix, path, def string) error {
	p, err := s.Hosts.For(ctx, modelOf(c.R, def), prefix == MsgBatchPrefix)
	if err != nil {
		return err
	}
	q := c.R.URL.Query()
	q.Del("model")
	for _, k := range []string{"after", "before", "after_id", "before_id"} {
		if v := q.Get(k); v != "" {
			name, up, ok := Decode(prefix, v)
			if !ok || name != p.Name {
				return invalid(k, "Invalid '"+k+"': not an id of this list.")
			}
			q.Set(k, up)
		}
	}
	a, err := p.Host.Object(ctx, llm.ObjectCall{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return upstreamError(err, nil)
	}
	c.Rec.Target = p.Name
	return s.relayJSON(ctx, c, a, rewriter{s: s, name: p.Name, prefix: prefix, list: true, key: c.In.Key, base: baseURL(c.R), t: c.T})
}

// modelOf is the model a request names for its objects' host: its query's model, its
// X-Sluice-Model header, else def.
func modelOf(r *http.Request, def string) string {
	if m := r.URL.Query().Get("model"); m != "" {
		return m
	}
	if m := r.Header.Get("X-Sluice-Model"); m != "" {
		return m
	}
	return def
}

// baseURL is the gateway's own root as the client reached it, for the URLs of answers
// (Anthropic's results_url).
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

// maxJSON caps a JSON answer the gateway rewrites (an object, a page of a list).
const maxJSON = 32 << 20

// relayJSON answers a's JSON body with its ids rewritten by rw.
func (s *Service) relayJSON(ctx context.Context, c Call, a *llm.ObjectAnswer, rw rewriter) error {
	defer a.Body.Close()
	b, err := io.ReadAll(io.LimitReader(a.Body, maxJSON+1))
	if err != nil || len(b) > maxJSON {
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusBadGateway, Message: "the upstream's answer was cut or too large"}
	}
	out, err := rw.rewrite(ctx, b)
	if err != nil {
		return err
	}
	c.W.Header().Set("Content-Type", "application/json")
	c.W.WriteHeader(a.Status)
	_, _ = c.W.Write(out)
	return nil
}

// upstreamError is err as the client sees it: the host's NotFound is missing (the wire's
// own 404 of the id, nil: err as it is).
func upstreamError(err, missing error) error {
	var le *llm.Error
	if missing != nil && errors.As(err, &le) && le.Kind == llm.NotFound {
		return missing
	}
	return err
}

// notFound is a 404 saying msg.
func notFound(msg string) *llm.Error {
	return &llm.Error{Kind: llm.NotFound, Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found", Message: msg}
}

// invalid is a 400 of param saying msg.
func invalid(param, msg string) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: msg}
}

// fileMissing, batchMissing and msgBatchMissing are the wires' 404 of an id, in their words.
func fileMissing(id string) error { return notFound("No such File object: " + shown(id)) }

func batchMissing(id string) error { return notFound("No such Batch object: " + shown(id)) }

func msgBatchMissing(id string) error { return notFound("Message batch not found: " + shown(id)) }

// shown is id as an error quotes it: valid UTF-8, at most 128 bytes.
func shown(id string) string {
	if len(id) > 128 {
		id = id[:128] + "..."
	}
	return strings.ToValidUTF8(id, "")
}
