package openai

import (
	"context"
	"slices"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Responses calls one provider through the OpenAI Responses API (POST {base}/responses),
// the transport of the provider option `api: responses`. It shares Client's HTTP call,
// error mapping and event-stream decoding; the request body and the events differ. Safe
// for concurrent use.
type Responses struct {
	conn
}

var _ llm.Provider = (*Responses)(nil)

// NewResponses returns a Responses for c. NoStreamOptions does not apply: a Responses
// stream always reports its usage in response.completed.
func NewResponses(c Config) *Responses {
	return &Responses{conn: newConn(c)}
}

// ResponsesAPI reports that this provider speaks the Responses API: only such a provider can
// serve a request that names a previous_response_id, which lives in the upstream's store.
func (*Responses) ResponsesAPI() bool { return true }

// includeEncrypted is the include value that asks for reasoning items' encrypted content.
const includeEncrypted = "reasoning.encrypted_content"

// Stream starts a streamed Responses call of req. It returns once the upstream answered: a
// request the Responses API cannot express (n > 1) is Invalid before any call; a non-2xx
// answer or a connection failure is an *llm.Error (Target left for the caller to set). The
// stream is the caller's to Close; canceling ctx aborts it.
func (r *Responses) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	req = keepReasoning(r.derive(req))
	body, err := encodeResponsesRequest(req)
	if err != nil {
		return nil, err
	}
	encrypted := slices.Contains(req.Include, includeEncrypted)
	if req.Plain {
		res, err := r.send(ctx, "responses", body, true)
		if err != nil {
			return nil, r.callError(ctx, err)
		}
		return newPlainResponses(ctx, r.origin, res.Body, encrypted), nil
	}
	rc, err := r.post(ctx, "responses", body)
	if err != nil {
		return nil, err
	}
	// Encrypted reasoning goes to the client only when it asked for it: an upstream may send
	// it anyway (it did in recordings), and it is opaque bytes nobody else needs.
	return newResponsesStream(ctx, r.origin, rc, encrypted), nil
}
