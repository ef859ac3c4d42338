package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

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
	out, err := embeddings.Answer(st)
	if err != nil {
		return s.reject(c, err)
	}
	if u, ok := embeddings.Usage(out); ok {
		in.Usage = telemetry.UsageOf(u) // the limiter reconciles its token reservation with it
		s.chargeEmbeddings(c, st, u)
	}
	return c.JSONBlob(http.StatusOK, out)
}

// resolveEmbeddings finds the chain for model: an embeddings alias, or "provider/model" of a
// provider that serves embeddings, as one target.
func (s *Server) resolveEmbeddings(model string) (*fallback.Chain, error) {
	if ch := s.embedders.Find(model); ch != nil {
		return ch, nil
	}
	msg := "The model '" + model + "' does not exist or you do not have access to it."
	if _, ok := s.o.Chains[model]; ok {
		msg = "The model '" + model + "' is a chat model alias, not an embeddings alias."
	} else if p, _, _ := strings.Cut(model, "/"); s.o.Providers[p] != nil {
		msg = "The provider '" + p + "' does not serve embeddings (it is not OpenAI-compatible)."
	}
	return nil, unknownModel(msg)
}

// embedders are the providers that serve embeddings, as targets of an embeddings chain.
func embedders(ps map[string]fallback.Provider) map[string]fallback.Provider {
	out := map[string]fallback.Provider{}
	for name, p := range ps {
		if e, ok := embeddings.Target(p); ok {
			out[name] = e
		}
	}
	return out
}
