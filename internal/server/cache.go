package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

// cacheHit and cacheCoalesced are the X-Sluice-Cache values of an answer from the cache.
const cacheHit, cacheCoalesced = string(cache.Hit), string(cache.Coalesced)

// cacheFill is a miss to store once its round succeeded (internal/cache decides).
type cacheFill = cache.Fill

// fromCache is the cache's turn before a round (serveStream, serveOnce): internal/cache
// answers, through cacheEdge, and fromCache reports true, or it keeps the miss to store.
func (s *Server) fromCache(c echo.Context, chain *fallback.Chain, w wire, stream bool) (bool, error) {
	p, x := s.o.Policies[chain.Alias].Cache, exchangeOf(c)
	if p == nil || s.o.Cache == nil || x.ticket == nil || x.ticket.Req == nil {
		return false, nil
	}
	q := cache.Query{Policy: *p, Alias: chain.Alias, Request: x.ticket.Req, CacheControl: c.Request().Header.Get("Cache-Control"),
		Stream: stream, Live: stream && !holding(c)}
	if x.key != nil {
		q.Caller = cache.Caller{KeyID: x.key.ID, Metadata: x.key.Metadata}
	}
	hit, fill, err := s.o.Cache.Serve(c.Request().Context(), q, &cacheEdge{s: s, c: c, x: x, w: w, stream: stream})
	x.cache = fill
	return hit, err
}

// cacheEdge is a request's side of the cache (cache.Edge): its headers and its wire. No
// provider is called for it, so no token is spent (the limiter reconciles the reservation
// to zero).
type cacheEdge struct {
	s      *Server
	c      echo.Context
	x      *exchange
	w      wire
	stream bool
	how    string
	model  string
	open   bool // the stream started
}

func (ed *cacheEdge) Result(r cache.Result) { cacheResult(ed.c, string(r), 0) }

// Waiting starts, for a streamed client, keepalives while it waits, on the writer that
// serves its stream whatever comes of the wait (eventWriter). Should they send the headers,
// the cache's two are declared trailers.
func (ed *cacheEdge) Waiting() {
	if ed.stream && ed.x.ew == nil {
		ed.x.ew = ed.s.newEventWriter(ed.c, append(append([]string(nil), trailers...), "X-Sluice-Cache", "Age"))
	}
}

func (ed *cacheEdge) Judge(resp *llm.Response) error {
	if r := ed.x.ticket.Guards.Output(ed.c.Request().Context(), ed.x.ticket.Req, resp); r != nil {
		return turn.Refused(r)
	}
	return nil
}

// Start sends the headers of an answer from the cache (with the first events, for a
// stream) and returns the wire's sink.
func (ed *cacheEdge) Start(model, target string, age int64, how cache.Result) (cache.Sink, error) {
	ed.how, ed.model, ed.x.access.Target, ed.x.access.Usage = string(how), model, target, &telemetry.Usage{}
	headers := func(h http.Header) {
		h.Set("X-Sluice-Cache", ed.how)
		h.Set("Age", strconv.FormatInt(age, 10))
		h.Set("X-Sluice-Target", target)
		h.Set("X-Sluice-Attempts", "0")
	}
	if !ed.stream {
		headers(ed.c.Response().Header())
		return ed.w.Attempt(model), nil
	}
	ed.open, ed.x.ew = true, ed.s.eventWriter(ed.c)
	if err := ed.x.ew.Start(headers); err != nil {
		return nil, err
	}
	return ed.w.Open(ed.x.ew, model)
}

func (ed *cacheEdge) Finish(resp *llm.Response) error {
	ed.x.access.Response = resp
	cacheResult(ed.c, ed.how, resp.Usage.TotalTokens)
	if !ed.stream {
		return ed.c.JSONBlob(http.StatusOK, ed.w.Body(ed.model, resp))
	}
	defer ed.x.ew.Close()
	if ed.w.End(&resp.Usage) != nil {
		ed.x.access.Kind = llm.Canceled // the client stopped reading
	}
	return nil
}

// Fail answers err: a plain HTTP error while the headers have not left, else the wire's
// in-band failure (none for a client that left): after the stream started, or once a
// keepalive sent the headers while the request waited.
func (ed *cacheEdge) Fail(err error) error {
	ew := ed.x.ew
	if ew != nil {
		defer ew.Close()
	}
	if !ed.open && (ew == nil || !ew.Quiet()) {
		return ed.s.reject(ed.c, err)
	}
	if ed.x.access.Kind = llm.KindOf(err); ed.x.access.Kind != llm.Canceled {
		_ = ed.w.Fail(ew, err)
	}
	if ed.open {
		cacheResult(ed.c, ed.how, 0)
	}
	return nil
}

// cacheResult says what the cache did for the request: X-Sluice-Cache, the access record
// (cache= in the log line), the metrics and the span; saved is the tokens a hit did not
// spend.
func cacheResult(c echo.Context, result string, saved int) {
	in := reqInfo(c)
	in.Cache = result
	c.Response().Header().Set("X-Sluice-Cache", result)
	telemetry.Cache(c.Request().Context(), in.Model, result, saved)
}

// endFlight ends the request's lead, if it still holds one, as failed (cache.Fill.End).
// Deferred by serveStream and serveOnce.
func endFlight(c echo.Context) {
	if f := exchangeOf(c).cache; f != nil {
		f.End()
	}
}

// recording is the sink of st's round that a miss will store: next, recorded (and, for a
// leader, shared with the requests that follow it).
func recording(c echo.Context, st *fallback.Stream, next sink) sink {
	if f := exchangeOf(c).cache; f != nil {
		return f.Sink(next, st.Model, st.Target)
	}
	return next
}

// roundContext is the context of the request's round: a leader's outlives its client
// (cache.Fill.Context). The cancel func must be called.
func roundContext(c echo.Context) (context.Context, context.CancelFunc) {
	return exchangeOf(c).cache.Context(c.Request().Context())
}

// leading is cl, or for a leader cl that outlives its client: the round goes on when the
// client leaves (its writes are dropped by the fill's sink), for the requests that follow.
func leading(c echo.Context, cl turn.Client) turn.Client {
	if f := exchangeOf(c).cache; f.Leading() {
		return turn.Outliving(cl, func(st *fallback.Stream) relay.Sink { return recording(c, st, discard{}) })
	}
	return cl
}

type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

// toCache stores the answer of a round that succeeded, if its request is a miss to store.
func (s *Server) toCache(c echo.Context, st *fallback.Stream, resp *llm.Response) {
	f := exchangeOf(c).cache
	if f == nil || st == nil {
		return
	}
	exchangeOf(c).cache = nil
	ctx := context.WithoutCancel(c.Request().Context())
	n, evicted := f.Done(ctx, st.Model, resp)
	if n > 0 {
		telemetry.CacheStored(ctx, f.Alias(), n)
	}
	if evicted > 0 {
		telemetry.CacheEvicted(ctx, f.Alias(), evicted)
	}
}

// clearCache serves DELETE /admin/cache: every stored answer, or those of ?alias=. A store
// that cannot be reached is a 503: the caller asked for the deletion.
func (s *Server) clearCache(c echo.Context) error {
	alias := c.QueryParam("alias")
	n := 0
	if s.o.Cache != nil {
		var err error
		if n, err = s.o.Cache.Clear(c.Request().Context(), alias); err != nil {
			return s.reject(c, &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable,
				Code: "redis_unavailable", Type: "server_error", Message: "The cache (Redis) is unreachable. Retry shortly."})
		}
	}
	return c.JSON(http.StatusOK, cache.Cleared(alias, n))
}
