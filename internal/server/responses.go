package server

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// responsesAPI is implemented by providers that may speak the Responses API upstream. Only
// they can serve a previous_response_id: the earlier response lives in that upstream's
// store.
type responsesAPI interface{ ResponsesAPI() bool }

func servesResponses(t *fallback.Target) bool {
	p, ok := t.Provider.(responsesAPI)
	return ok && p.ResponsesAPI()
}

// responses serves POST /v1/responses: the Responses API on the same chain, relay and event
// writer as chat, so any adapter serves it, with the alias's redaction, think filter and
// coalescing.
func (s *Server) responses(c echo.Context) error {
	var rr *responsesRequest
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		r, err := decodeResponses(b)
		if err != nil {
			return "", nil, err
		}
		rr = r
		return r.Model, &r.req, nil
	}, func(chain *fallback.Chain, req *llm.Request) (*fallback.Chain, error) {
		if req.PreviousResponseID == "" {
			return chain, nil
		}
		if chain = chain.Filter(servesResponses); chain == nil {
			return nil, oai.Invalid("previous_response_id",
				"previous_response_id can only be served by an OpenAI Responses upstream (a provider with api: responses), and model '%s' has none.", rr.Model)
		}
		return chain, nil
	})
	if err != nil {
		return s.reject(c, err)
	}
	// The model is the client's until a target commits, then the served one, as in chat.
	w := &respWire{id: reqInfo(c).ID, meta: &respMeta{id: "resp_" + reqInfo(c).ID, created: time.Now().Unix(),
		model: rr.Model, echo: &rr.echo, metadata: req.Metadata}}
	if req.Stream {
		return s.serveStream(c, chain, run, w)
	}
	return s.serveOnce(c, chain, run, w)
}

// respWire is the Responses wire of one request: response.created ... response.completed,
// the error event and response.failed, the Response object.
type respWire struct {
	id   string
	meta *respMeta
	sink *responsesSink
}

func (w *respWire) Open(ew *sse.Writer, model string) (sink, error) {
	w.meta.model = model
	w.sink = newResponsesSink(ew, w.meta, w.id)
	return w.sink, w.sink.begin()
}

func (w *respWire) End(u *llm.Usage) error { return w.sink.end(u) }

func (w *respWire) Fail(ew *sse.Writer, err error) error {
	if w.sink == nil {
		w.sink = newResponsesSink(ew, w.meta, w.id)
	}
	return w.sink.fail(err)
}

func (w *respWire) Attempt(model string) sink {
	w.meta.model = model
	w.sink = newResponsesSink(nil, w.meta, w.id)
	return w.sink
}

func (w *respWire) Body(_ string, resp *llm.Response) []byte {
	return w.sink.body(&resp.Usage)
}
