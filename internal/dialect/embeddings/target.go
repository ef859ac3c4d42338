package embeddings

import (
	"context"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
)

// embedder is a provider that serves the OpenAI embeddings endpoint: body is the client's
// JSON object, passed on with its model member set to model; the answer is the upstream's
// JSON, unchanged. Errors are *llm.Error, as from Stream.
type embedder interface {
	Embed(ctx context.Context, model string, body []byte) ([]byte, error)
}

// embedProvider runs an embeddings call as a chain attempt: the whole call happens in
// Stream, and the answer is one terminal event (Raw holds the JSON), which commits. So the
// chain's retries, cooldowns, timeouts (first_event bounds the call) and exhausted-chain
// errors apply unchanged. The request's Extra holds the client's members but model.
type embedProvider struct{ e embedder }

var _ llm.Provider = embedProvider{}

// Target is p as the target of an embeddings chain; false when p does not serve embeddings
// (not OpenAI-compatible, or nil).
func Target(p llm.Provider) (llm.Provider, bool) {
	e, ok := p.(embedder)
	if !ok {
		return nil, false
	}
	return embedProvider{e}, true
}

func (p embedProvider) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	raw, err := p.e.Embed(ctx, req.Model, Body(req))
	if err != nil {
		return nil, err
	}
	return &oneEvent{ev: llm.Event{Type: llm.EvDone, Finish: "stop", Raw: raw}}, nil
}

// oneEvent is a stream of one event, then io.EOF.
type oneEvent struct {
	ev   llm.Event
	done bool
}

func (s *oneEvent) Recv() (llm.Event, error) {
	if s.done {
		return llm.Event{}, io.EOF
	}
	s.done = true
	return s.ev, nil
}

func (s *oneEvent) Close() error { return nil }

// Answer reads the committed attempt of an embeddings chain (a Target's stream): its one
// event, the upstream's body, and its clean end, so that the target's health hears the
// attempt ended well. An attempt that did not end cleanly is an Internal error.
func Answer(st llm.Stream) ([]byte, error) {
	ev, err := st.Recv() // the committing event, replayed
	if err == nil {
		_, err = st.Recv() // io.EOF
	}
	if err != io.EOF {
		return nil, &llm.Error{Kind: llm.Internal, Message: "the embeddings attempt did not end cleanly", Err: err}
	}
	return ev.Raw, nil
}
