package server

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/dialect/responses"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// responsesAPI is implemented by providers that may speak the Responses API upstream. Only
// they can serve a previous_response_id, a conversation, a stored prompt, an item_reference
// or a file: those live in that upstream's store.
type responsesAPI interface{ ResponsesAPI() bool }

func servesResponses(t *fallback.Target) bool {
	p, ok := t.Provider.(responsesAPI)
	return ok && p.ResponsesAPI()
}

// responses serves POST /v1/responses: the Responses API on the same chain, relay and event
// writer as chat, so any adapter serves it, with the alias's redaction, think filter and
// coalescing.
func (s *Server) responses(c echo.Context) error {
	var rr *responses.Request
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		r, err := responses.Decode(b)
		if err != nil {
			return "", nil, err
		}
		rr = r
		return r.Model, &r.Req, nil
	}, func(chain *fallback.Chain, req *llm.Request) (*fallback.Chain, error) {
		param := rr.NativeOnly()
		if param == "" {
			return chain, nil
		}
		if chain = chain.Filter(servesResponses); chain == nil {
			return nil, oai.Invalid(param,
				"'%s' can only be served by an OpenAI Responses upstream (a provider with api: responses), and model '%s' has none.", param, rr.Model)
		}
		return chain, nil
	})
	if err != nil {
		return s.reject(c, err)
	}
	// The model is the client's until a target commits, then the served one, as in chat.
	w := responses.NewWire(reqInfo(c).ID, time.Now().Unix(), rr)
	if req.Stream {
		return s.serveStream(c, chain, run, w)
	}
	return s.serveOnce(c, chain, run, w)
}
