package runs

import (
	"context"
	"errors"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// round relays one round to its end. A failure of the committed target mid-round (or a
// guardrail's retry) restarts the round on the next target when the policy allows it: the
// client is told to drop what it got, and the round starts again in the same step. A held
// round (Spec.Hold) is recorded, not encoded, and reaches the client only once its output
// guardrails passed: a refused one is never seen.
func (r *Run) round(ctx context.Context, st *fallback.Stream, req *llm.Request) (*llm.Response, *fallback.Stream, error) {
	fr := r.sp.Chain
	for {
		o := r.sp.Relay
		o.Start = time.Now()
		var out relay.Sink = sink{r.enc}
		var rec *relay.Recorder
		if r.sp.Hold {
			rec = &relay.Recorder{}
			out = rec
		}
		resp, err := relay.Run(ctx, st, out, o)
		screened := false // the error is a guardrail's verdict, not the target's failure
		if err == nil && r.sp.Screen != nil {
			err = r.sp.Screen(ctx, resp)
			screened = err != nil
		}
		if err == nil {
			if rec != nil {
				_ = rec.Replay(sink{r.enc}) // the encoder's sink never fails
			}
			return resp, st, nil
		}
		retry := errors.Is(err, ErrRetry)
		if ctx.Err() != nil {
			st.Close()
			return nil, nil, context.Cause(ctx)
		}
		if !screened {
			fr.Fail(st, err) // before Close: a closed stream gives the target no verdict
		}
		st.Close()
		if screened && !retry {
			return nil, nil, err // a refusal ends the run: another target is not asked
		}
		if !(r.sp.Restart || retry) || !fr.Left() {
			if retry {
				return nil, nil, err
			}
			return nil, nil, midstream(st.Target, err)
		}
		reason := llm.KindOf(err).String()
		if retry {
			reason = "guardrail_retry"
		}
		telemetry.Restart(ctx, st.Target, reason)
		if rec == nil { // nothing of a held round reached the client: nothing to drop
			r.enc.Restart(restartData(r.id, st.Target))
		}
		if st, err = fr.Restart(ctx, req); err != nil {
			return nil, nil, err
		}
		r.served(st)
	}
}

// sink hands the relay's released text of the first choice to the encoder; it never fails:
// the run does not depend on any connection.
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
