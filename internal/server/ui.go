package server

import (
	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/tools"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// UI is what frontend runs need (DESIGN §8): the manager of the runs, the aliases that
// restart a round on the next target when the committed one fails, and the browser origins
// CORS lets through.
type UI struct {
	// Runs runs and serves the frontend runs; nil: New makes one in memory. Server.Close
	// closes it.
	Runs *runs.Manager
	// RunOptions are what Runs was made with, for tests that remake it.
	RunOptions runs.Options
	// Restart holds the aliases with on_midstream_failure: restart.
	Restart map[string]bool
	// Origins are cors.allowed_origins ("*": any); none: no CORS headers.
	Origins []string
	// Tools are the server-side tools the aliases offer; Server.Close closes their Set.
	Tools tools.Menu
}

// run starts a frontend run over the AI SDK UI message stream (DESIGN §8), admitted like a
// chat request, in the runs manager, and this connection reads it from its first frame
// (runs.Manager.Run). Closing the connection does not stop the run: it goes on and can be
// resumed.
func (s *Server) run(c echo.Context, q *call) error {
	st, t := q.d.Native.(*uistream.Start), exchangeOf(c).ticket
	sp := runs.Spec{Chat: st.Chat, Key: reqInfo(c).KeyID /* "": auth off */, Version: st.Version, MessageID: st.WritesOn(), Model: st.Model,
		Request: q.d.Req, Chain: q.chain.Start(q.d.Req), Relay: s.roundOptions(c, q.chain), Restart: s.o.UI.Restart[q.chain.Alias],
		Tools: q.offered, Prices: s.o.Usage.Prices, // nil: the built-in table
		Guards: t.Guards} // the start's budget reservation covers the first rounds' cost
	rounds := t.Rounds()
	if rounds != nil {
		sp.Admit = rounds
	}
	err := s.o.UI.Runs.Run(c.Request().Context(), s.edge(c), sp) // returns when the run ended
	t.Held = append(t.Held, rounds.Reservations()...)            // settled with the request's
	return err
}
