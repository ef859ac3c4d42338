package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/turn"
)

// wire is what differs between the client-facing APIs (Chat Completions, Responses) once a
// request is decoded: how a committed stream opens, ends and fails in-band, and the body of a
// non-streamed answer. The commit point, the headers, heartbeats and trailers, and fallback
// are the same for every API: serveStream and serveOnce. A wire serves one request.
type wire interface {
	// Open writes the opening events of the stream committed to the served model on ew and
	// returns the sink the relay writes the round to.
	Open(ew *sse.Writer, model string) (sink, error)
	// End writes the last events after a complete round.
	End(u *llm.Usage) error
	// Fail writes the in-band failure; Open may not have been called (the chain failed after a
	// keepalive had sent the headers).
	Fail(ew *sse.Writer, err error) error
	// Attempt returns the sink of one attempt of a non-streamed answer (fresh each time: an
	// abandoned attempt's output is not the answer), and Body the answer of a complete one.
	Attempt(model string) sink
	Body(model string, resp *llm.Response) []byte
}

// sink is relay.Sink's method set, as the dialects (which do not know the relay) name it.
type sink = interface{ Event(*llm.Event) error }

// serveStream serves a streaming client. Before commit a failure is an ordinary HTTP error,
// unless a keepalive already sent the headers; after it, the wire's in-band failure. A round
// an output guardrail holds is served by serveHeld.
func (s *Server) serveStream(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	if hit, err := s.fromCache(c, chain, w, true); hit { // cache.go
		return err
	}
	defer endFlight(c)
	if holding(c) {
		return s.serveHeld(c, chain, run, w) // hold.go
	}
	ctx, done := roundContext(c) // cache.go: a leader's outlives its client
	defer done()
	in := reqInfo(c)
	ew := s.eventWriter(c)
	defer ew.Close()
	st, err := run.Next(ctx)
	if err != nil {
		in.Kind = llm.KindOf(err)
		if !ew.Begun() {
			served(c, run, nil)
			return writeError(c, err)
		}
		setServed(in, run, nil, c.Response().Header())
		_ = w.Fail(ew, err)
		return nil
	}
	t := s.turn(c, chain, run, turn.Live)
	resp, st, err := t.Round(ctx, leading(c, &streamClient{c: c, run: run, ew: ew, w: w}), st)
	if st != nil {
		defer st.Close()
		if resp != nil {
			finished(in, run, st, resp)
		}
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
	if m := meterOf(c); m != nil {
		t.Guards, t.Request, t.Meter = m.guards, m.req, roundMeter{m}
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

// start reads and decodes a request, resolves its model to a chain, applies the alias's input
// redaction to the decoded request, and starts a run. decode returns the model asked for and
// the request.
func (s *Server) start(c echo.Context, decode func([]byte) (string, *llm.Request, error),
	filter func(*fallback.Chain, *llm.Request) (*fallback.Chain, error)) (*fallback.Chain, *fallback.Run, *llm.Request, error) {
	in := reqInfo(c)
	body, err := s.readBody(c)
	if err != nil {
		return nil, nil, nil, err
	}
	model, req, err := decode(body)
	if err != nil {
		return nil, nil, nil, err
	}
	in.Model, in.Stream, in.Request = model, req.Stream, req
	chain, err := s.resolve(model)
	if err != nil {
		return nil, nil, nil, err
	}
	if filter != nil {
		if chain, err = filter(chain, req); err != nil {
			return nil, nil, nil, err
		}
	}
	if s.o.Policies[chain.Alias].RedactInput && s.o.RedactText != nil {
		req.Mask(s.o.RedactText, s.o.RedactJSON) // the alias's redact_input
	}
	if err := s.admit(c, chain, req, len(body)); err != nil { // guard.go: input guardrails, budget
		return nil, nil, nil, err
	}
	return chain, chain.Start(req), req, nil
}
