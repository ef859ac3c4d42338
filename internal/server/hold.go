package server

import (
	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/turn"
)

// serveHeld serves a streaming client whose round an output guardrail in mode hold judges
// before any of it leaves (DESIGN §6), for every wire: turn records the relay's output and
// replays it through the wire, as the stream the client asked for, once the round is
// complete and passed. Until then the client has seen nothing but keepalives, so, as for a
// non-streamed client, a failure at any point falls back to the next target, and a refusal
// is a plain 422 unless a keepalive already sent the headers (then the in-band error).
// Refused text never reaches the client.
func (s *Server) serveHeld(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	ctx := c.Request().Context()
	in := reqInfo(c)
	ew := s.eventWriter(c)
	defer ew.Close()
	st, err := run.Next(ctx)
	if err != nil {
		return s.heldFail(c, ew, w, run, nil, err)
	}
	t := s.turn(c, chain, run, turn.Held)
	resp, st, err := t.Round(ctx, &streamClient{c: c, run: run, ew: ew, w: w, held: true}, st)
	if st != nil {
		st.Close()
	}
	if err == nil || llm.KindOf(err) == llm.Refused {
		finished(in, run, st, resp)
	}
	if err != nil {
		return s.heldFail(c, ew, w, run, st, err)
	}
	if err := w.End(&resp.Usage); err != nil {
		in.Kind = llm.Canceled // the client stopped reading
	}
	s.toCache(c, st, resp)
	return nil
}

// heldFail answers err for a held stream: a plain HTTP error while the headers have not
// left, else the wire's in-band failure (none for a client that left).
func (s *Server) heldFail(c echo.Context, ew *sse.Writer, w wire, run *fallback.Run, st *fallback.Stream, err error) error {
	in := reqInfo(c)
	in.Kind = llm.KindOf(err)
	if !ew.Quiet() {
		served(c, run, st)
		costHeader(c, c.Response().Header())
		return writeError(c, err)
	}
	setServed(in, run, st, c.Response().Header())
	if llm.KindOf(err) != llm.Canceled {
		_ = w.Fail(ew, err)
	}
	return nil
}
