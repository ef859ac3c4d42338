package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/turn"
)

// wire and sink are a request's client wire (dialect.Wire: Chat Completions, Responses,
// Messages) and the sink of a round on it.
type (
	wire = dialect.Wire
	sink = dialect.Sink
)

// serveStream serves a streaming client. Before commit a failure is a plain HTTP error,
// unless a keepalive already sent the headers (then the wire's in-band failure). Live, the
// headers leave at commit and a later failure is in-band. Held (an output guardrail in mode
// hold judges the round before any of it leaves, DESIGN §6), turn records the relay's output
// and replays it through the wire once the round is complete and passed: until then the
// client has seen nothing but keepalives, so, as for a non-streamed client, a failure at any
// point falls back to the next target, and a refusal is a plain 422 unless a keepalive
// already sent the headers. Refused text never reaches the client.
func (s *Server) serveStream(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	if hit, err := s.fromCache(c, chain, w, true); hit { // cache.go
		return err
	}
	defer endFlight(c)
	held, mode := holding(c), turn.Live
	if held {
		mode = turn.Held
	}
	ctx, done := roundContext(c) // cache.go: a leader's outlives its client
	defer done()
	in := reqInfo(c)
	ew := s.eventWriter(c)
	defer ew.Close()
	st, err := run.Next(ctx)
	if err != nil {
		return s.streamFail(c, ew, w, run, nil, err, held)
	}
	t := s.turn(c, chain, run, mode)
	resp, st, err := t.Round(ctx, leading(c, &streamClient{c: c, run: run, ew: ew, w: w, held: held}), st)
	if st != nil {
		defer st.Close()
		if resp != nil && (!held || err == nil || llm.KindOf(err) == llm.Refused) {
			finished(in, run, st, resp)
		}
	}
	if err != nil && held {
		return s.streamFail(c, ew, w, run, st, err, true)
	}
	if err == nil {
		if err = w.End(&resp.Usage); err != nil {
			err = &llm.Error{Kind: llm.Canceled, Err: err} // the client stopped reading
		}
		s.toCache(c, st, resp)
	}
	in.Kind = llm.KindOf(err)
	if err != nil && llm.KindOf(err) != llm.Canceled {
		_ = w.Fail(ew, err) // a refusal, or the target's failure after the answer started
	}
	return nil
}

// streamFail answers err for a stream whose headers may not have left: a plain HTTP error
// while they have not (with the cost so far, for a held one), else the wire's in-band
// failure (none for a client that left).
func (s *Server) streamFail(c echo.Context, ew *sse.Writer, w wire, run *fallback.Run, st *fallback.Stream, err error, held bool) error {
	in := reqInfo(c)
	in.Kind = llm.KindOf(err)
	if !ew.Quiet() {
		served(c, run, st)
		if held {
			costHeader(c, c.Response().Header())
		}
		return s.writeError(c, err)
	}
	setServed(in, run, st, c.Response().Header())
	if llm.KindOf(err) != llm.Canceled {
		_ = w.Fail(ew, err)
	}
	return nil
}

// serveOnce serves a non-streamed client: it has seen nothing until the answer is complete,
// so a failure at any point falls back to the next target.
func (s *Server) serveOnce(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	if hit, err := s.fromCache(c, chain, w, false); hit { // cache.go
		return err
	}
	defer endFlight(c)
	ctx, done := roundContext(c) // cache.go: a leader's outlives its client
	defer done()
	st, err := run.Next(ctx)
	if err != nil {
		served(c, run, nil)
		return s.reject(c, err)
	}
	t := s.turn(c, chain, run, turn.Whole)
	resp, st, err := t.Round(ctx, &onceClient{c: c, run: run, w: w}, st)
	if st == nil {
		served(c, run, nil) // no target was left
	} else {
		st.Close()
		if err == nil || llm.KindOf(err) == llm.Refused {
			finished(reqInfo(c), run, st, resp)
			costHeader(c, c.Response().Header())
		}
	}
	if err != nil {
		return s.reject(c, err)
	}
	s.toCache(c, st, resp)
	return c.JSONBlob(http.StatusOK, w.Body(st.Model, resp))
}

// turn is how the request's rounds run: its chain walk, the alias's relay options, its
// output guardrails and its meter.
func (s *Server) turn(c echo.Context, chain *fallback.Chain, run *fallback.Run, mode turn.Mode) *turn.Turn {
	t := &turn.Turn{Run: run, Mode: mode, Relay: s.roundOptions(c, chain)}
	if tk := exchangeOf(c).ticket; tk != nil {
		t.Guards, t.Request, t.Meter = tk.Guards, tk.Req, roundMeter{tk}
	}
	return t
}

// streamClient is a streamed answer. Live, the headers leave at commit with the first
// frames, and from then on what is written leaves when the upstream is about to be waited
// for; held, they leave, with the cost, with the replay of a round that passed.
type streamClient struct {
	c    echo.Context
	run  *fallback.Run
	ew   *sse.Writer
	w    wire
	held bool
}

func (sc *streamClient) Serving(*fallback.Stream) {}

func (sc *streamClient) Open(st *fallback.Stream) (relay.Sink, error) {
	in := reqInfo(sc.c)
	headers := func(h http.Header) { setServed(in, sc.run, st, h) }
	if sc.held {
		headers = func(h http.Header) { setServed(in, sc.run, st, h); costHeader(sc.c, h) }
	} else {
		sc.ew.Batching()
		st.BeforeWait(sc.ew.Release)
	}
	if err := sc.ew.Start(headers); err != nil {
		return nil, err
	}
	sk, err := sc.w.Open(sc.ew, st.Model)
	return recording(sc.c, st, sk), err
}

func (sc *streamClient) Relayed() bool {
	sc.ew.Release() // before the guardrails and the accounting, which may wait
	return sc.ew.Failed()
}

func (sc *streamClient) Restart(string) {}

// onceClient is a non-streamed answer: each attempt relays to a fresh sink of the wire, and
// the headers say who served.
type onceClient struct {
	c   echo.Context
	run *fallback.Run
	w   wire
}

func (oc *onceClient) Serving(st *fallback.Stream) { served(oc.c, oc.run, st) }
func (oc *onceClient) Open(st *fallback.Stream) (relay.Sink, error) {
	return recording(oc.c, st, oc.w.Attempt(st.Model)), nil
}
func (oc *onceClient) Relayed() bool  { return false }
func (oc *onceClient) Restart(string) {}

// roundMeter is the request's ticket as turn's meter.
type roundMeter struct{ t *admit.Ticket }

func (rm roundMeter) Round(st *fallback.Stream, resp *llm.Response, err error) {
	rm.t.Round(st.Target, st.Model, resp, err)
}

// holding reports whether the request's round must be held until the output verdict.
func holding(c echo.Context) bool {
	t := exchangeOf(c).ticket
	return t != nil && t.Guards.Holds()
}
