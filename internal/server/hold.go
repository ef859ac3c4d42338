package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
)

// serveHeld serves a streaming client whose round an output guardrail in mode hold judges
// before any of it leaves (DESIGN §6), for every wire: the relay's output is recorded, not
// written; once the round is complete and passed, it is replayed through the wire as the
// stream the client asked for. Until then the client has seen nothing but keepalives, so, as
// for a non-streamed client, a failure at any point falls back to the next target, and a
// refusal is a plain 422 unless a keepalive already sent the headers (then the in-band
// error). Refused text never reaches the client.
func (s *Server) serveHeld(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	ctx := c.Request().Context()
	in := reqInfo(c)
	ew := s.eventWriter(c)
	defer ew.Close()
	for {
		st, err := run.Next(ctx)
		if err != nil {
			return s.heldFail(c, ew, w, run, nil, err)
		}
		rec := &relay.Recorder{}
		resp, err := relay.Run(ctx, st, rec, s.roundOptions(c, chain))
		s.meterRound(c, st, resp, err)
		if err != nil {
			if llm.KindOf(err) == llm.Canceled || ctx.Err() != nil {
				st.Close()
				return s.heldFail(c, ew, w, run, st, &llm.Error{Kind: llm.Canceled, Err: err})
			}
			run.Fail(st, err) // before Close: a stream closed first gives the target no verdict
			st.Close()
			continue
		}
		st.Close()
		finished(in, run, st, resp)
		if err := s.screen(c, resp); err != nil {
			return s.heldFail(c, ew, w, run, st, err)
		}
		if err := ew.Start(func(h http.Header) { setServed(in, run, st, h); costHeader(c, h) }); err != nil {
			in.Kind = llm.Canceled.String()
			return nil
		}
		sink, err := w.Open(ew, st.Model)
		if err == nil {
			err = rec.Replay(sink)
		}
		if err == nil {
			err = w.End(&resp.Usage)
		}
		if err != nil {
			in.Kind = llm.Canceled.String() // the client stopped reading
		}
		return nil
	}
}

// heldFail answers err for a held stream: a plain HTTP error while the headers have not
// left, else the wire's in-band failure (none for a client that left).
func (s *Server) heldFail(c echo.Context, ew *sse.Writer, w wire, run *fallback.Run, st *fallback.Stream, err error) error {
	in := reqInfo(c)
	in.Kind = llm.KindOf(err).String()
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
