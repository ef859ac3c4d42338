package runs

import (
	"context"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/turn"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// round runs one round of the run through turn, to its end. The run is locked to its target
// (DESIGN §3): a failure of the committed target mid-round (or a guardrail's retry) restarts
// the round on the next target when the policy allows it, and the client is told to drop what
// it got; otherwise it ends the run. A held round (a guardrail in mode hold) reaches the
// client only once its output guardrails passed: a refused one is never seen.
func (r *Run) round(ctx context.Context, st *fallback.Stream, req *llm.Request) (*llm.Response, *fallback.Stream, error) {
	t := turn.Turn{Run: r.sp.Chain, Mode: turn.Live, Relay: r.sp.Relay, Guards: r.sp.Guards, Request: req,
		Restart: r.sp.Restart, Retry: true, Locked: true}
	t.Relay.Start = time.Time{} // each round's first text counts from its own start
	if r.sp.Guards.Holds() {
		t.Mode = turn.Held
	}
	resp, st, err := t.Round(ctx, client{r}, st)
	if err != nil {
		return nil, nil, err
	}
	return resp, st, nil
}

// client is the run's side of a round: the encoder, which never fails (the run depends on
// no connection).
type client struct{ r *Run }

func (c client) Serving(st *fallback.Stream)               { c.r.served(st) }
func (c client) Open(*fallback.Stream) (relay.Sink, error) { return sink{c.r.enc}, nil }
func (c client) Relayed() bool                             { return false }
func (c client) Restart(failed string)                     { c.r.enc.Restart(restartData(c.r.id, failed)) }

// sink hands the relay's released text of the first choice to the encoder; it never fails.
type sink struct{ e *uistream.Encoder }

func (s sink) Event(ev *llm.Event) error {
	if ev.Choice != 0 {
		return nil
	}
	switch ev.Type {
	case llm.EvText, llm.EvRefusal:
		s.e.Text(ev.Text)
	case llm.EvReasoning:
		s.e.Reasoning(ev.Text) // opaque reasoning stays server-side
	}
	return nil
}
