package turn

import (
	"context"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The requests that run no round: answered by one body from a target.

// Call serves a request whose answer is one body from the first target that answers (an
// embeddings call): fallback happens before the commit, within the chain. answer reads the
// body from st, with its usage (nil: unknown), which is metered.
func (t *Turn) Call(ctx context.Context, e Edge, answer func(st *fallback.Stream) ([]byte, *llm.Usage, error)) error {
	st, err := t.Run.Next(ctx)
	t.served(e, st)
	if err != nil {
		return e.Error(err)
	}
	defer st.Close()
	b, u, err := answer(st)
	if err != nil {
		return e.Error(err)
	}
	if u != nil {
		e.Access().Usage = telemetry.UsageOf(*u) // the limiter reconciles its token reservation with it
		if t.Meter != nil {
			t.Meter.Round(st.Target, st.Model, &llm.Response{Usage: *u}, nil)
		}
		e.Cost()
	}
	return e.Body(b)
}

// Count answers a token count of req: the first target of ch that counts (an Anthropic
// target's count_tokens endpoint) and answers, else the wire's estimate, said in
// X-Sluice-Token-Count: estimated. body is the wire's answer of n tokens.
func Count(ctx context.Context, e Edge, ch *fallback.Chain, req *llm.Request, estimate func() int, body func(n int) []byte) error {
	for t := range ch.All() {
		tc, ok := t.Provider.(counter)
		if !ok {
			continue
		}
		n, err := tc.CountTokens(ctx, req, t.Model)
		if err == nil {
			e.Header("X-Sluice-Target", t.Name)
			return e.Body(body(n))
		}
		if k := llm.KindOf(err); k == llm.Invalid || k == llm.Canceled {
			return e.Error(err) // the client's to change, or gone
		}
	}
	e.Header("X-Sluice-Token-Count", "estimated")
	return e.Body(body(estimate()))
}

// counter is a provider that counts the input tokens of a request for model.
type counter interface {
	CountTokens(ctx context.Context, req *llm.Request, model string) (int, error)
}
