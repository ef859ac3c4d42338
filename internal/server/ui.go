package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/uistream"
	"github.com/sluice-gw/sluice/internal/usage"
)

// uiChat serves POST /v1/ui/chat: a frontend run over the AI SDK UI message stream (DESIGN
// §8). The request is checked like a chat request (auth, limits, the model, input redaction),
// then the run starts in the runs manager and this connection reads it from its first frame.
// Closing the connection does not stop the run: it goes on and can be resumed.
func (s *Server) uiChat(c echo.Context) error {
	v, err := uistream.ParseVersion(c.Request().Header.Get(uistream.Header))
	if err != nil {
		return s.reject(c, oai.Invalid("x-sluice-ui-protocol", "Invalid x-sluice-ui-protocol header: want v5, v6 or v7."))
	}
	var ur *uistream.Request
	var offered runs.Tools // the alias's server-side tools (tools.Menu)
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		r, err := uistream.Decode(b)
		if err != nil {
			return "", nil, err
		}
		ur = r
		return r.Model, &r.Req, nil
	}, func(ch *fallback.Chain, r *llm.Request) (*fallback.Chain, error) {
		o, err := s.o.UI.Tools.For(c.Request().Context(), ch.Alias, s.o.Policies[ch.Alias].RedactInput, r)
		if o != nil {
			offered = o // not a nil *Offer in the interface
		}
		return ch, err
	})
	if err != nil {
		return s.reject(c, err)
	}
	sp := runs.Spec{Chat: ur.Chat, Key: keyID(c), Version: v, MessageID: ur.WritesOn(), Model: ur.Model, Request: req,
		Chain: run, Relay: s.roundOptions(c, chain), Restart: s.o.UI.Restart[chain.Alias], Tools: offered,
		Prices: s.o.Usage.Prices} // nil: the built-in table
	var held []usage.Reservation
	if m := meterOf(c); m != nil {
		sp.Guards, held = m.guards, m.Held // the start's reservation covers the first rounds' cost
	}
	rounds := s.adm.Rounds(callerKey(c), held)
	if rounds != nil {
		sp.Admit = rounds
	}
	rn, rd, err := s.o.UI.Runs.Start(c.Request().Context(), sp)
	if err != nil {
		return s.reject(c, runs.Public(err))
	}
	defer rd.Close()
	err = s.serveRun(c, rn, rd)
	// A client that left does not stop the run (DESIGN §8), and the request's accounting
	// (usage, cost, budget, the limiter's reconciliation, the access line) covers every round
	// of it: the handler returns when the run ended. On shutdown the drain's grace bounds it.
	<-rn.Ended()
	if m := meterOf(c); m != nil {
		m.Held = append(m.Held, rounds.Reservations()...) // settled with the request's
	}
	in := reqInfo(c)
	in.Usage = telemetry.UsageOf(rn.Usage())
	// After a restart: the target that ended the run, and the attempts with the restart's
	// (the headers may have left before it).
	in.Target, in.Attempts = rn.Served()
	return err
}

// keyID is the caller's key id ("" with auth off): a run belongs to it.
func keyID(c echo.Context) string {
	if k := callerKey(c); k != nil {
		return k.ID
	}
	return ""
}

// serveRun writes a run's frames to the client as they come (runs.Copy), with heartbeats
// and per-write deadlines. rn is the run when this connection started it: its headers then
// carry the served target, and a chain that failed before commit answers a plain HTTP error.
func (s *Server) serveRun(c echo.Context, rn *runs.Run, rd *runs.Reader) error {
	in := reqInfo(c)
	in.Stream = true
	c.Response().Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	ew := s.eventWriter(c)
	defer ew.Close()
	served := func(h http.Header) {
		if rn == nil {
			return
		}
		in.Target, in.Attempts = rn.Headed()
		if in.Target != "" {
			h.Set("X-Sluice-Target", in.Target)
		}
		h.Set("X-Sluice-Attempts", strconv.Itoa(in.Attempts))
	}
	d := runs.Copy(c.Request().Context(), rd, ew, rn, served, in.Start)
	if d.FirstText > 0 && in.FirstText == 0 {
		in.FirstText = d.FirstText // time to first token of a run: to the first text this client was sent
	}
	if d.Early != nil {
		served(c.Response().Header())
		in.Kind = llm.KindOf(d.Early)
		return writeError(c, d.Early)
	}
	if d.Kind != llm.KindNone {
		in.Kind = d.Kind
	}
	return nil
}
