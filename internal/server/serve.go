package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
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
// unless a keepalive already sent the headers; after it, the wire's in-band failure.
func (s *Server) serveStream(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	if holding(c) {
		return s.serveHeld(c, chain, run, w) // hold.go
	}
	ctx := c.Request().Context()
	in := reqInfo(c)
	ew := s.eventWriter(c)
	defer ew.Close()
	st, err := run.Next(ctx)
	if err != nil {
		in.Kind = llm.KindOf(err).String()
		if !ew.Begun() {
			served(c, run, nil)
			return writeError(c, err)
		}
		setServed(in, run, nil, c.Response().Header())
		_ = w.Fail(ew, err)
		return nil
	}
	defer st.Close()
	// From commit on, what is written (the headers too) leaves when the upstream is about to
	// be waited for: the headers and the first frames in one write.
	ew.Batching()
	st.BeforeWait(ew.Release)
	if err := ew.Start(func(h http.Header) { setServed(in, run, st, h) }); err != nil {
		in.Kind = llm.Canceled.String()
		return nil
	}
	sink, err := w.Open(ew, st.Model)
	if err != nil {
		in.Kind = llm.Canceled.String() // the client stopped reading
		return nil
	}
	resp, err := relay.Run(ctx, st, sink, s.roundOptions(c, chain))
	ew.Release() // before the guardrails and the accounting, which may wait
	finished(in, run, st, resp)
	s.meterRound(c, st, resp, err) // usage.go
	if err == nil {
		if rerr := s.screen(c, resp); rerr != nil {
			// A stream-mode output guardrail refused what the client has seen: in-band, and
			// never the target's fault.
			in.Kind = llm.Refused.String()
			_ = w.Fail(ew, rerr)
			return nil
		}
		if err = w.End(&resp.Usage); err == nil {
			return nil
		}
	}
	k := llm.KindOf(err)
	if ctx.Err() != nil || k == llm.Canceled || ew.Failed() {
		k = llm.Canceled // the client left or stopped reading: not the target's fault
	}
	in.Kind = k.String()
	if k == llm.Canceled {
		return nil
	}
	run.Fail(st, err)
	_ = w.Fail(ew, midstream(st.Target, err))
	return nil
}

// serveOnce serves a non-streamed client: it has seen nothing until the answer is complete,
// so a failure at any point falls back to the next target.
func (s *Server) serveOnce(c echo.Context, chain *fallback.Chain, run *fallback.Run, w wire) error {
	ctx := c.Request().Context()
	for {
		st, err := run.Next(ctx)
		served(c, run, st)
		if err != nil {
			return s.reject(c, err)
		}
		resp, err := relay.Run(ctx, st, w.Attempt(st.Model), s.roundOptions(c, chain))
		s.meterRound(c, st, resp, err) // usage.go
		if err == nil {
			st.Close()
			finished(reqInfo(c), run, st, resp)
			costHeader(c, c.Response().Header())
			if err := s.screen(c, resp); err != nil {
				return s.reject(c, err)
			}
			return c.JSONBlob(http.StatusOK, w.Body(st.Model, resp))
		}
		if llm.KindOf(err) == llm.Canceled || ctx.Err() != nil {
			st.Close()
			return s.reject(c, &llm.Error{Kind: llm.Canceled, Err: err})
		}
		run.Fail(st, err) // before Close: a stream closed first gives the target no verdict
		st.Close()
	}
}

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
