package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

// edge is a request's side of its rounds and of the cache (turn.Edge): its response, its
// wire's error format, its ticket's cost.
type edge struct {
	s *Server
	c echo.Context
	x *exchange
}

// edge is c's, kept in its exchange (one allocation less per request).
func (s *Server) edge(c echo.Context) *edge {
	x := exchangeOf(c)
	x.edge = edge{s: s, c: c, x: x}
	return &x.edge
}

func (e *edge) Access() *telemetry.Access { return &e.x.access }

// Stream is the request's event stream, with the server's heartbeat and write deadline:
// one per request, started while it waited for an identical one or when it is served.
func (e *edge) Stream(cached bool) *sse.Writer {
	if e.x.ew == nil {
		tr := trailers
		if cached {
			tr = append(append([]string(nil), trailers...), "X-Sluice-Cache", "Age")
		}
		e.x.ew = e.s.newEventWriter(e.c, tr)
	}
	return e.x.ew
}

func (e *edge) Header(name, value string) { e.c.Response().Header().Set(name, value) }
func (e *edge) Cost()                     { costHeader(e.c, e.c.Response().Header()) }
func (e *edge) Error(err error) error     { return e.s.reject(e.c, err) }
func (e *edge) Body(b []byte) error       { return e.c.JSONBlob(http.StatusOK, b) }

// fromCache is the cache's turn before the round of t (cache.Cache.Serve): it answers, and
// fromCache reports true, or it returns the miss to store (nil: none).
func (s *Server) fromCache(c echo.Context, t *turn.Turn, alias string, e *edge, w turn.Wire, stream bool) (bool, turn.Keeper, error) {
	p, x := s.o.Policies[alias].Cache, e.x
	if p == nil || s.o.Cache == nil || t.Request == nil {
		return false, nil, nil
	}
	q := cache.Query{Policy: *p, Alias: alias, Request: t.Request, CacheControl: c.Request().Header.Get("Cache-Control"),
		Stream: stream, Live: stream && !t.Guards.Holds()}
	if x.key != nil {
		q.Caller = cache.Caller{KeyID: x.key.ID, Metadata: x.key.Metadata}
	}
	hit, fill, err := s.o.Cache.Serve(c.Request().Context(), q, e, w, t.Judge)
	if fill == nil {
		return hit, nil, err // not a nil *Fill in the interface
	}
	return hit, fill, err
}
