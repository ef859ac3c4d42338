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

// fromCache is the cache's turn before a round (serveStream, serveOnce): for an alias that
// caches, internal/cache serves the answer it holds, through cacheEdge, and fromCache
// reports true, or it keeps the miss to store.
func (s *Server) fromCache(c echo.Context, chain *fallback.Chain, w wire, stream bool) (bool, error) {
	p, x := s.o.Policies[chain.Alias].Cache, exchangeOf(c)
	if p == nil || s.o.Cache == nil || x.meter == nil || x.meter.req == nil {
		return false, nil
	}
	q := cache.Query{Policy: *p, Alias: chain.Alias, Request: x.meter.req, CacheControl: c.Request().Header.Get("Cache-Control"),
		Stream: stream, Live: stream && !holding(c)}
	if x.key != nil {
		q.Caller = cache.Caller{KeyID: x.key.ID, Metadata: x.key.Metadata}
	}
	hit, fill, err := s.o.Cache.Serve(c.Request().Context(), q, &cacheEdge{s: s, c: c, w: w, stream: stream})
	x.cache = fill
	return hit, err
}

// cacheEdge is a request's side of the cache: its headers and its wire.
type cacheEdge struct {
	s      *Server
	c      echo.Context
	w      wire
	stream bool
	open   bool // a live follower's stream started (Open)
}

func (ed *cacheEdge) Result(r cache.Result) { cacheResult(ed.c, string(r), 0) }

// Fail answers err: the wire's in-band failure once a followed stream started (none for a
// client that left), else as unwait does.
func (ed *cacheEdge) Fail(err error) error {
	if !ed.open {
		return ed.s.unwait(ed.c, ed.w, err)
	}
	x := exchangeOf(ed.c)
	defer x.ew.Close()
	if x.access.Kind = llm.KindOf(err); x.access.Kind != llm.Canceled {
		_ = ed.w.Fail(x.ew, err)
	}
	cacheResult(ed.c, cacheCoalesced, 0)
	return nil
}

// Open starts the stream of a live follower: the leader's answer, on this client's wire,
// as the leader's client gets it.
func (ed *cacheEdge) Open(model, target string) (cache.Sink, error) {
	ed.open = true
	x := exchangeOf(ed.c)
	x.access.Target, x.access.Usage = target, &telemetry.Usage{}
	err := ed.s.eventWriter(ed.c).Start(func(h http.Header) { cacheHeaders(h, target, 0) })
	if err != nil {
		return nil, err
	}
	return ed.w.Open(x.ew, model)
}

// End ends a live follower's stream once the answer is complete: its output guardrails
// judge it, as a live round's do, then the wire's last events.
func (ed *cacheEdge) End(e *cache.Entry) error {
	x := exchangeOf(ed.c)
	resp := e.Response
	if r := x.meter.guards.Output(ed.c.Request().Context(), x.meter.req, &resp); r != nil {
		return ed.Fail(turn.Refused(r))
	}
	defer x.ew.Close()
	x.access.Response = &resp
	cacheResult(ed.c, cacheCoalesced, resp.Usage.TotalTokens)
	if ed.w.End(&resp.Usage) != nil {
		x.access.Kind = llm.Canceled
	}
	return nil
}

// cacheHeaders are the headers of an answer from the cache, age seconds old.
func cacheHeaders(h http.Header, target string, age int64) {
	h.Set("X-Sluice-Cache", cacheCoalesced)
	h.Set("Age", strconv.FormatInt(age, 10))
	h.Set("X-Sluice-Target", target)
	h.Set("X-Sluice-Attempts", "0")
}

// Waiting starts, for a streamed client, the keepalives while it waits; the stream,
// whatever comes of the wait, is served on this writer (eventWriter). Should they send the
// headers, the cache's two are declared trailers.
func (ed *cacheEdge) Waiting() {
	if x := exchangeOf(ed.c); ed.stream && x.ew == nil {
		x.ew = ed.s.newEventWriter(ed.c, append(append([]string(nil), trailers...), "X-Sluice-Cache", "Age"))
	}
}

// Serve answers from the cache on the client's wire: the stored events replayed into the
// wire's sink (a stream with the answer's own pieces), or the assembled body. The
// request's output guardrails judge the answer again (a key may have its own); no provider
// is called, so no token is spent (the limiter reconciles the reservation to zero).
func (ed *cacheEdge) Serve(e *cache.Entry, how cache.Result) error {
	s, c, w, x := ed.s, ed.c, ed.w, exchangeOf(ed.c)
	in, h := &x.access, c.Response().Header()
	resp := e.Response
	if r := x.meter.guards.Output(c.Request().Context(), x.meter.req, &resp); r != nil {
		return s.unwait(c, w, turn.Refused(r))
	}
	in.Target, in.Usage, in.Response = e.Target, &telemetry.Usage{}, &resp
	cacheHeaders(h, e.Target, s.o.Cache.Age(e))
	cacheResult(c, string(how), resp.Usage.TotalTokens)
	if !ed.stream {
		_ = e.Replay(w.Attempt(e.Model)) // an assembling sink does not fail
		return c.JSONBlob(http.StatusOK, w.Body(e.Model, &resp))
	}
	ew := s.eventWriter(c)
	defer ew.Close()
	err := ew.Start(func(http.Header) {})
	if err == nil {
		var sk sink
		if sk, err = w.Open(ew, e.Model); err == nil {
			err = e.Replay(sk)
		}
	}
	if err == nil {
		err = w.End(&resp.Usage)
	}
	if err != nil {
		in.Kind = llm.Canceled // the client stopped reading
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
		return detached{cl, c}
	}
	return cl
}

type detached struct {
	turn.Client
	c echo.Context
}

func (d detached) Open(st *fallback.Stream) (relay.Sink, error) {
	if sk, err := d.Client.Open(st); err == nil {
		return sk, nil
	}
	return recording(d.c, st, discard{}), nil // the client left before the answer
}

func (d detached) Relayed() bool { d.Client.Relayed(); return false }

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
	if n := f.Done(ctx, st.Model, resp); n > 0 {
		telemetry.CacheStored(ctx, f.Alias(), n)
	}
}

// unwait answers err for a request that may have waited for an identical one: a plain HTTP
// error, unless a keepalive sent the headers while it waited (then the wire's in-band
// failure, none for a client that left).
func (s *Server) unwait(c echo.Context, w wire, err error) error {
	x := exchangeOf(c)
	if x.ew == nil {
		return s.reject(c, err)
	}
	defer x.ew.Close()
	if !x.ew.Quiet() {
		return s.reject(c, err)
	}
	x.access.Kind = llm.KindOf(err)
	if llm.KindOf(err) != llm.Canceled {
		_ = w.Fail(x.ew, err)
	}
	return nil
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
	var a *string
	if alias != "" {
		a = &alias
	}
	return c.JSON(http.StatusOK, struct {
		Object  string  `json:"object"`
		Alias   *string `json:"alias"`
		Deleted int     `json:"deleted"`
	}{"cache.cleared", a, n})
}
