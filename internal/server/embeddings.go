package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
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
	b := []byte{'{'}
	for i, f := range req.Extra {
		if i > 0 {
			b = append(b, ',')
		}
		b = oai.AppendString(b, f.Name)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	raw, err := p.e.Embed(ctx, req.Model, append(b, '}'))
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
	model, req, err := decodeEmbeddings(body)
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
	if u, ok := embeddingUsage(ev.Raw); ok {
		in.Usage = accessUsage(u) // the limiter reconciles its token reservation with it
		s.chargeEmbeddings(c, st, u)
	}
	return c.JSONBlob(http.StatusOK, ev.Raw)
}

// embeddingUsage reads the usage object of an embeddings answer without decoding its
// vectors (megabytes of numbers): OpenAI writes usage last, and `"usage":` cannot occur in
// the vectors, and elsewhere only escaped inside a string.
func embeddingUsage(raw []byte) (llm.Usage, bool) {
	i := bytes.LastIndex(raw, []byte(`"usage":`))
	if i < 0 || (i > 0 && raw[i-1] == '\\') {
		return llm.Usage{}, false
	}
	var u struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
	if json.NewDecoder(bytes.NewReader(raw[i+len(`"usage":`):])).Decode(&u) != nil {
		return llm.Usage{}, false
	}
	return llm.Usage{PromptTokens: u.PromptTokens, TotalTokens: u.TotalTokens}, true
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

// decodeEmbeddings checks an embeddings body and keeps every member but model, raw and in
// order, for the upstream. Members it does not know are passed on: compatible servers take
// extras (input_type, truncate).
func decodeEmbeddings(body []byte) (string, *llm.Request, error) {
	var model string
	req := &llm.Request{}
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		switch key {
		case "model":
			if err := json.Unmarshal(raw, &model); err != nil {
				return oai.TypeErr(key, "a string")
			}
			return nil
		case "input":
			if err := embeddingInput(raw); err != nil {
				return err
			}
		case "encoding_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || (f != "float" && f != "base64") {
				return oai.Invalid(key, "Invalid value for 'encoding_format'. Supported values are: 'float' and 'base64'.")
			}
		case "dimensions":
			if _, err := oai.Int(key, raw, 1, 1<<16); err != nil {
				return err
			}
		case "user":
			var u string
			if err := json.Unmarshal(raw, &u); err != nil {
				return oai.TypeErr(key, "a string")
			}
		}
		req.Extra = append(req.Extra, llm.Field{Name: key, Value: raw})
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if model == "" {
		return "", nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	for _, f := range req.Extra {
		if f.Name == "input" {
			return model, req, nil
		}
	}
	return "", nil, oai.Invalid("input", "Missing required parameter: 'input'.")
}

// embeddingInput accepts what the API does: a string, an array of strings, an array of
// tokens, or an array of token arrays, never empty.
func embeddingInput(raw json.RawMessage) error {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return oai.Invalid("input", "Invalid 'input': empty string.")
		}
		return nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return oai.TypeErr("input", "a string, an array of strings, or an array of token arrays")
	}
	if len(many) == 0 || len(many) > 2048 {
		return oai.Invalid("input", "Invalid 'input': expected an array of 1 to 2048 items.")
	}
	var ss []string
	var toks []int64
	var arrays [][]int64
	if json.Unmarshal(raw, &ss) != nil && json.Unmarshal(raw, &toks) != nil && json.Unmarshal(raw, &arrays) != nil {
		return oai.TypeErr("input", "a string, an array of strings, or an array of token arrays")
	}
	return nil
}
