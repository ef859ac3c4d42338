package fallback

import (
	"context"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The rounds of a frontend run (DESIGN §8) share one Run: these start its later attempts.

// Again starts a later round of the turn on the target st committed to, with req, the round's
// request: after commit the target is locked for the rest of the turn, tool rounds included
// (DESIGN §3). The target's retries apply, but a failure never falls back: it is returned.
// The caller owns the stream and must Close it.
func (r *Run) Again(ctx context.Context, st *Stream, req *llm.Request) (*Stream, error) {
	t := r.target(st.Target)
	if t == nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: "target " + st.Target + " is not in the chain"}
	}
	r.req = r.chain.autoCache(req)
	return r.try(ctx, t)
}

// Restart gives up the committed target after it failed mid-round (the restart policy of
// frontend runs: on_midstream_failure: restart, or an output guardrail's action: retry) and
// walks on from the element after it, with req, exactly as Next does. The caller has told its
// client to drop the round's output before calling it.
func (r *Run) Restart(ctx context.Context, req *llm.Request) (*Stream, error) {
	r.req = r.chain.autoCache(req)
	return r.Next(ctx)
}

// Left reports whether elements remain that Restart could try.
func (r *Run) Left() bool { return r.next < len(r.elems) }

func (r *Run) target(name string) *Target {
	for i := range r.elems {
		for j := range r.elems[i].Targets {
			if r.elems[i].Targets[j].Name == name {
				return &r.elems[i].Targets[j]
			}
		}
	}
	return nil
}
