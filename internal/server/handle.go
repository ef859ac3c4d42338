package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/reqbody"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/turn"
	"github.com/sluice-gw/sluice/internal/usage"
)

// call is a model request once admitted: its decoding, the chain its model resolved to, and
// for a frontend run the alias's server-side tools it is offered.
type call struct {
	d       *dialect.Decoded
	chain   *fallback.Chain
	bodyLen int
	offered runs.Tools
}

// modelOp is the one handler of every route whose request names a model (dialect.Op.Models),
// whatever its wire: it reads and decodes the body once, resolves the model to its chain,
// admits the request once (admit.Ticket.Admit), serves it by its op, and settles the ticket
// whatever came of it.
func (s *Server) modelOp(api *dialect.API, op dialect.Op) echo.HandlerFunc {
	return func(c echo.Context) error {
		x := exchangeOf(c)
		x.ticket = s.adm.Ticket(x.key, time.Now())
		q, err := s.admitted(c, api, op)
		if err != nil {
			if admit.Gated(err) {
				return s.deny(c, err) // refused before any round: nothing to settle
			}
			defer s.settle(c)
			return s.reject(c, err)
		}
		defer s.settle(c)
		ctx, e := c.Request().Context(), s.edge(c)
		switch q.d.Of(op) {
		case dialect.Count:
			return turn.Count(ctx, e, q.chain, q.d.Req, q.d.Estimate, api.Counted)
		case dialect.Run:
			return s.run(c, q)
		}
		t := s.turn(c, q)
		if op == dialect.Media { // the answer passed through as it comes (speech, transcriptions, image edits)
			return t.Pass(ctx, e, c.Response(), q.d.Req, q.d.Bill)
		}
		if op == dialect.Embed {
			// Fallback stays within one embedding model: the configuration refuses a chain that mixes them.
			return t.Call(ctx, e, func(st *fallback.Stream) ([]byte, *llm.Usage, error) { return embeddings.Read(st, api.Usage) })
		}
		w, stream := q.d.Answer(x.access.ID), q.d.Req.Stream
		hit, k, err := s.fromCache(c, t, q.chain.Alias, e, w, stream) // cache.go
		if !hit {
			err = t.Serve(ctx, e, w, stream, k)
		}
		if keep := q.d.Keep; keep != nil { // a stored response, whether or not the client stayed
			if kerr := keep(context.WithoutCancel(ctx), q.chain.Alias); kerr != nil {
				s.o.Log.Warn("response not kept", "id", x.access.ID, "err", kerr)
			}
		}
		return err
	}
}

// turn is how the request's rounds run: its chain walk, the alias's relay options, its
// output guardrails and its meter, the request's ticket.
func (s *Server) turn(c echo.Context, q *call) *turn.Turn {
	tk := exchangeOf(c).ticket
	return &turn.Turn{Run: q.chain.Start(q.d.Req), Relay: s.roundOptions(c, q.chain), Guards: tk.Guards, Request: tk.Req,
		Meter: tk}
}

// admitted reads and decodes the request, resolves its model, applies the alias's input
// redaction and admits it. The access record says what was asked from the decoding on.
func (s *Server) admitted(c echo.Context, api *dialect.API, op dialect.Op) (*call, error) {
	x, r := exchangeOf(c), c.Request()
	body, err := s.readBody(c)
	if err != nil {
		return nil, err
	}
	d, err := api.Read(body, dialect.Input{Op: op, Header: r.Header.Get, Param: dialect.PathParams(c.Param, r.URL), Query: c.QueryParam,
		State: &s.o.State, Key: x.access.KeyID, Record: x.access.Record, Body: reqbody.Stream(c.Response(), r, s.o.MaxUploadBytes, s.o.BodyTimeout)})
	if err != nil {
		return nil, err
	}
	in := &x.access
	in.Model, in.Request = d.Model, d.Req
	if d.Of(op) == dialect.Call {
		in.Stream = d.Req.Stream
	}
	q := &call{d: d, bodyLen: len(body)}
	if op.Plain() {
		q.chain, err = s.o.Plain(api, d.Model)
	} else {
		q.chain, err = s.catalog.Resolve(d.Model)
	}
	if err != nil {
		return nil, err
	}
	in.Alias = q.chain.Alias
	if d.Needs != "" {
		if q.chain = q.chain.Filter(fallback.ServesResponses); q.chain == nil {
			return nil, oai.Invalid(d.Needs, "'%s' can only be served by an OpenAI Responses upstream (a provider with api: "+
				"responses), and model '%s' has none.", d.Needs, d.Model)
		}
	}
	// A hosted tool no target can run is left out, with a warning (the alias's hosted_tools:
	// drop, the default), or left to the chain, which refuses it (refuse).
	if t := d.Req.Hosted(); t != nil && !s.o.Policies[in.Alias].RefuseHosted && q.chain.Filter(fallback.ServesResponses) == nil {
		d.Req.DropHosted()
		w := "dropped hosted tool " + strings.Join(t, ", ") + " (no target of alias " + in.Alias + " serves it)"
		c.Response().Header().Set("X-Sluice-Warning", w)
		s.o.Log.Warn("hosted tool dropped", "id", in.ID, "alias", in.Alias, "tools", t)
	}
	if op == dialect.Run {
		o, err := s.o.UI.Tools.For(r.Context(), q.chain.Alias, s.o.Policies[q.chain.Alias].RedactInput, d.Req)
		if err != nil {
			return nil, err
		}
		if o != nil {
			q.offered = o // not a nil *Offer in the interface
		}
	}
	if !op.Plain() && s.o.Policies[q.chain.Alias].RedactInput && s.o.RedactText != nil {
		d.Req.Mask(s.o.RedactText, s.o.RedactJSON) // the alias's redact_input
	}
	if err := d.Resumed(r.Context()); err != nil { // after redaction, before admission
		return nil, err
	}
	a := admit.Ask{Model: d.Model, Req: d.Req, Chain: q.chain, BodyLen: len(body), Embeddings: op.Plain()}
	if d.Of(op) == dialect.Count {
		a.Chain = nil // no round: the key's access and rate limits only
	}
	err = x.ticket.Admit(r.Context(), a)
	if x.key != nil {
		oai.RateHeaders(c.Response().Header(), x.ticket.Limits) // on refusals and answers alike
	}
	return q, err
}

// settle ends the request's ticket once it was served, however it ended (admit.Ticket.Settle).
func (s *Server) settle(c echo.Context) {
	x := exchangeOf(c)
	x.ticket.Settle(context.WithoutCancel(c.Request().Context()), &x.access, c.Response().Status)
}

// costHeader sets X-Sluice-Cost-Usd, the request's cost so far, on h: the headers of an
// answer that is complete before they leave (a non-streamed one, or a held stream).
func costHeader(c echo.Context, h http.Header) {
	if t := exchangeOf(c).ticket; t != nil && t.Charged {
		h.Set("X-Sluice-Cost-Usd", strconv.FormatFloat(usage.USD(t.Cost), 'f', -1, 64))
	}
}
