package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/turn"
)

// wire is what differs between the client-facing APIs (Chat Completions, Responses) once a
// request is decoded: how a committed stream opens, ends and fails in-band, and the body of a
// non-streamed answer. The commit point, the headers, heartbeats and trailers, and fallback
// are the same for every API: serveStream and serveOnce. A wire serves one request.
type wire interface {
	// open writes the opening events of the committed stream st on ew and returns the sink
	// the relay writes the round to.
	open(ew *eventWriter, st *fallback.Stream) (relay.Sink, error)
	// end writes the last events after a complete round.
	end(u *llm.Usage) error
	// fail writes the in-band failure; open may not have been called (the chain failed after a
	// keepalive had sent the headers).
	fail(ew *eventWriter, err error) error
	// attempt returns the sink of one attempt of a non-streamed answer (fresh each time: an
	// abandoned attempt's output is not the answer), and body the answer of a complete one.
	attempt(st *fallback.Stream) relay.Sink
	body(st *fallback.Stream, resp *llm.Response) []byte
}

// serveStream serves a streaming client. Before commit a failure is an ordinary HTTP error,
// unless a keepalive already sent the headers; after it, the wire's in-band failure. A round
// an output guardrail holds is served by serveHeld.
func (s *Server) serveStream(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	if holding(c) {
		return s.serveHeld(c, chain, run, w) // hold.go
	}
	ctx := c.Request().Context()
	in := reqInfo(c)
	ew := newEventWriter(c.Response(), s.o.Heartbeat, s.o.WriteTimeout)
	defer ew.close()
	st, err := run.Next(ctx)
	if err != nil {
		in.Kind = llm.KindOf(err)
		if !ew.begun() {
			served(c, run, nil)
			return writeError(c, err)
		}
		setServed(in, run, nil, c.Response().Header())
		_ = w.fail(ew, err)
		return nil
	}
	t := s.turn(c, chain, run, turn.Live)
	resp, st, err := t.Round(ctx, &streamClient{c: c, run: run, ew: ew, w: w}, st)
	if st != nil {
		defer st.Close()
		if resp != nil {
			finished(in, run, st, resp)
		}
	}
	if err == nil {
		if err = w.end(&resp.Usage); err != nil {
			err = &llm.Error{Kind: llm.Canceled, Err: err} // the client stopped reading
		}
	}
	in.Kind = llm.KindOf(err)
	if err != nil && llm.KindOf(err) != llm.Canceled {
		_ = w.fail(ew, err) // a refusal, or the target's failure after the answer started
	}
	return nil
}

// serveOnce serves a non-streamed client: it has seen nothing until the answer is complete,
// so a failure at any point falls back to the next target.
func (s *Server) serveOnce(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	ctx := c.Request().Context()
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
	return c.JSONBlob(http.StatusOK, w.body(st, resp))
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

// streamClient is a streamed answer as a round relays it: at commit the headers leave with
// the first frames, and from then on what is written leaves when the upstream is about to
// be waited for.
type streamClient struct {
	c   echo.Context
	run *fallback.Run
	ew  *eventWriter
	w   wire
}

func (sc *streamClient) Serving(*fallback.Stream) {}

func (sc *streamClient) Open(st *fallback.Stream) (relay.Sink, error) {
	in := reqInfo(sc.c)
	sc.ew.batching()
	st.BeforeWait(sc.ew.release)
	if err := sc.ew.start(func(h http.Header) { setServed(in, sc.run, st, h) }); err != nil {
		return nil, err
	}
	return sc.w.open(sc.ew, st)
}

func (sc *streamClient) Relayed() bool {
	sc.ew.release() // before the guardrails and the accounting, which may wait
	return sc.ew.failed()
}

func (sc *streamClient) Restart(string) {}

// onceClient is a non-streamed answer: each attempt relays to a fresh sink of the wire, and
// the headers say who served.
type onceClient struct {
	c   echo.Context
	run *fallback.Run
	w   wire
}

func (oc *onceClient) Serving(st *fallback.Stream)                  { served(oc.c, oc.run, st) }
func (oc *onceClient) Open(st *fallback.Stream) (relay.Sink, error) { return oc.w.attempt(st), nil }
func (oc *onceClient) Relayed() bool                                { return false }
func (oc *onceClient) Restart(string)                               {}

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
		redactInput(req, s.o.RedactText, s.o.RedactJSON)
	}
	if err := s.admit(c, chain, req, len(body)); err != nil { // guard.go: input guardrails, budget
		return nil, nil, nil, err
	}
	return chain, chain.Start(req), req, nil
}
