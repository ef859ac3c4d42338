package server

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/fallback"
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

var _ fallback.Provider = embedProvider{}

// EmbeddingsTarget is p as the target of an embeddings chain; false when p does not serve
// embeddings (not OpenAI-compatible, or nil).
func EmbeddingsTarget(p fallback.Provider) (fallback.Provider, bool) {
	e, ok := p.(embedder)
	if !ok {
		return nil, false
	}
	return embedProvider{e}, true
}

func (p embedProvider) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	raw, err := p.e.Embed(ctx, req.Model, embeddings.Body(req))
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

// embeddings serves POST /v1/embeddings through an embeddings alias (DESIGN §9), or a direct
// provider/model of an OpenAI-compatible provider. Fallback stays within one embedding model:
// the configuration refuses a chain that mixes them.
func (s *Server) embeddings(c echo.Context) error {
	in := reqInfo(c)
	body, err := s.readBody(c)
	if err != nil {
		return s.reject(c, err)
	}
	model, req, err := embeddings.Decode(body)
	if err != nil {
		return s.reject(c, err)
	}
	in.Model = model
	chain, err := s.resolveEmbeddings(model)
	if err != nil {
		return s.reject(c, err)
	}
	if err := s.reserveBudget(c, chain, nil, len(body)); err != nil { // budget.go
		return s.reject(c, err)
	}
	ctx := c.Request().Context()
	run := chain.Start(req)
	st, err := run.Next(ctx)
	served(c, run, st)
	if err != nil {
		return s.reject(c, err)
	}
	defer st.Close()
	ev, err := st.Recv() // the committing event, replayed
	if err == nil {
		_, err = st.Recv() // io.EOF: the attempt ends well and the target's health hears it
	}
	if err != io.EOF {
		return s.reject(c, &llm.Error{Kind: llm.Internal, Message: "the embeddings attempt did not end cleanly", Err: err})
	}
	if u, ok := embeddings.Usage(ev.Raw); ok {
		in.Usage = accessUsage(u) // the limiter reconciles its token reservation with it
		s.chargeEmbeddings(c, st, u)
	}
	return c.JSONBlob(http.StatusOK, ev.Raw)
}

// resolveEmbeddings finds the chain for model: an embeddings alias, or "provider/model" of a
// provider that serves embeddings, as one target.
func (s *Server) resolveEmbeddings(model string) (*fallback.Chain, error) {
	if ch, ok := s.o.Embeddings[model]; ok {
		return ch, nil
	}
	if p, m, ok := strings.Cut(model, "/"); ok && m != "" {
		if e, ok := s.o.Providers[p].(embedder); ok {
			return &fallback.Chain{Alias: model, CommitOnReasoning: true, Health: s.o.Health, Log: s.o.Log,
				Targets: []fallback.Target{{Name: model, Model: m, Provider: embedProvider{e}, Timeouts: s.o.Timeouts}}}, nil
		}
	}
	msg := "The model '" + model + "' does not exist or you do not have access to it."
	if _, ok := s.o.Chains[model]; ok {
		msg = "The model '" + model + "' is a chat model alias, not an embeddings alias."
	} else if p, _, _ := strings.Cut(model, "/"); s.o.Providers[p] != nil {
		msg = "The provider '" + p + "' does not serve embeddings (it is not OpenAI-compatible)."
	}
	return nil, &llm.Error{Kind: llm.NotFound, Param: "model", Code: "model_not_found", Type: "invalid_request_error", Message: msg}
}
