package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

// The X-Sluice-Cache values (issue 24). No header: the alias does not cache.
const (
	cacheHit    = "hit"
	cacheMiss   = "miss"
	cacheBypass = "bypass" // the client's Cache-Control, or a request the cache does not take
	// coalesced: the answer of an identical request this replica was answering (a hit that
	// waited for it).
	cacheCoalesced = "coalesced"
)

// cacheFill is a miss to be stored once its round succeeded: the request's cache key and
// the recorder of what its client's sink received.
type cacheFill struct {
	p          cache.Policy
	alias, key string
	rec        *cache.Recorder
	lead       *cache.Lead // identical requests wait for this one's answer (nil: none)
}

// fromCache is the cache's turn before a round (serveStream, serveOnce): for an alias that
// caches, it serves the answer it holds and reports true, or marks the miss to store. It
// sets X-Sluice-Cache.
func (s *Server) fromCache(c echo.Context, chain *fallback.Chain, w wire, stream bool) (bool, error) {
	p := s.o.Policies[chain.Alias].Cache
	x := exchangeOf(c)
	if p == nil || s.o.Cache == nil || x.meter == nil || x.meter.req == nil {
		return false, nil
	}
	req := x.meter.req
	keep := p.Cacheable(req)
	read := keep
	if p.ClientBypass {
		cc := strings.ToLower(c.Request().Header.Get("Cache-Control"))
		if strings.Contains(cc, "no-store") {
			read, keep = false, false
		} else if strings.Contains(cc, "no-cache") {
			read = false
		}
	}
	var caller cache.Caller
	if x.key != nil {
		caller = cache.Caller{KeyID: x.key.ID, Metadata: x.key.Metadata}
	}
	key := cache.Key(chain.Alias, p.Scope, caller, req)
	if key == "" {
		read, keep = false, false
	}
	if !read {
		cacheResult(c, cacheBypass, 0)
		if keep {
			x.cache = &cacheFill{p: *p, alias: chain.Alias, key: key}
		}
		return false, nil
	}
	ctx := c.Request().Context()
	if e := s.o.Cache.Get(ctx, chain.Alias, key); e != nil {
		return true, s.serveHit(c, e, w, stream, cacheHit)
	}
	// A miss: lead the key's flight, or wait for the identical request that leads it.
	var lead *cache.Lead
	for {
		var fl *cache.Flight
		if lead, fl = s.o.Cache.Join(key); lead != nil {
			break
		}
		if stream && x.ew == nil {
			// Keepalives while it waits; the stream, whatever comes of the wait, is served on
			// this writer (eventWriter). Should they send the headers, the cache's two are
			// declared trailers.
			x.ew = s.newEventWriter(c, append(append([]string(nil), trailers...), "X-Sluice-Cache", "Age"))
		}
		out, e, err := s.o.Cache.Wait(ctx, fl)
		switch {
		case err != nil:
			return true, s.unwait(c, w, &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err})
		case out == cache.Shared:
			return true, s.serveHit(c, e, w, stream, cacheCoalesced)
		}
		if out == cache.Alone {
			break
		}
	}
	cacheResult(c, cacheMiss, 0)
	x.cache = &cacheFill{p: *p, alias: chain.Alias, key: key, lead: lead}
	return false, nil
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

// endFlight ends the request's lead, if it still holds one, as failed: its round gave no
// answer (an error, a refusal, its client left), and a waiting request takes over. Deferred
// by serveStream and serveOnce.
func endFlight(c echo.Context) {
	if f := exchangeOf(c).cache; f != nil && f.lead != nil {
		f.lead.End(nil, true)
	}
}

// recording is the sink of a round that a miss will store: next, recorded. A fresh record
// each time: only the attempt that answered is the answer.
func recording(c echo.Context, next sink) sink {
	f := exchangeOf(c).cache
	if f == nil {
		return next
	}
	f.rec = cache.NewRecorder(next, f.p.MaxEntryBytes)
	return f.rec
}

// toCache stores the answer of a round that succeeded, if its request is a miss to store.
// The client may have left: the answer is complete, and the next caller gets it.
func (s *Server) toCache(c echo.Context, st *fallback.Stream, resp *llm.Response) {
	f := exchangeOf(c).cache
	if f == nil || st == nil {
		return
	}
	exchangeOf(c).cache = nil
	e := s.o.Cache.Entry(f.p, f.rec, st.Model, resp)
	ctx := context.WithoutCancel(c.Request().Context())
	if n := s.o.Cache.Put(ctx, f.p, f.alias, f.key, e); n > 0 {
		telemetry.CacheStored(ctx, f.alias, n)
	}
	if f.lead != nil {
		f.lead.End(e, false) // the waiting requests get the answer, or go on alone
	}
}

// serveHit answers from the cache on the client's wire: the stored events replayed into
// the wire's sink (a stream with the answer's own pieces), or the assembled body. The
// request's output guardrails judge the answer again (a key may have its own); no provider
// is called, so no token is spent (the limiter reconciles the reservation to zero).
func (s *Server) serveHit(c echo.Context, e *cache.Entry, w wire, stream bool, how string) error {
	x := exchangeOf(c)
	in, h := &x.access, c.Response().Header()
	resp := e.Response
	if r := x.meter.guards.Output(c.Request().Context(), x.meter.req, &resp); r != nil {
		return s.unwait(c, w, turn.Refused(r))
	}
	in.Target, in.Usage, in.Response = e.Target, &telemetry.Usage{}, &resp
	cacheResult(c, how, resp.Usage.TotalTokens)
	h.Set("Age", strconv.FormatInt(s.o.Cache.Age(e), 10))
	h.Set("X-Sluice-Target", e.Target)
	h.Set("X-Sluice-Attempts", "0")
	if !stream {
		sk := w.Attempt(e.Model)
		_ = e.Replay(sk) // an assembling sink does not fail
		return c.JSONBlob(http.StatusOK, w.Body(e.Model, &resp))
	}
	ew := s.eventWriter(c)
	defer ew.Close()
	if err := ew.Start(func(http.Header) {}); err != nil {
		in.Kind = llm.Canceled
		return nil
	}
	sk, err := w.Open(ew, e.Model)
	if err == nil {
		err = e.Replay(sk)
	}
	if err == nil {
		err = w.End(&resp.Usage)
	}
	if err != nil {
		in.Kind = llm.Canceled // the client stopped reading
	}
	return nil
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
