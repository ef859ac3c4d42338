package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// nativeBody is the body of a Messages client's own request (llm.Request.Native) for the
// target's model, always streamed: every other member goes on as the client wrote it
// (cache_control, thinking blocks and their signatures, server tools, members this adapter
// does not know), which a translation through llm would lose.
func nativeBody(body json.RawMessage, model string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "anthropic: the request body is not a JSON object"}
	}
	mb, _ := wire.Marshal(model)
	m["model"], m["stream"] = mb, json.RawMessage("true")
	b, err := wire.Marshal(m)
	if err != nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: "anthropic: cannot encode the request", Err: err}
	}
	return b, nil
}

// CountTokens asks the upstream's count_tokens endpoint for the input tokens of a Messages
// client's request (llm.Request.Native) for model. A request that came in another wire has
// nothing to count here: an Unsupported error.
func (c *Client) CountTokens(ctx context.Context, req *llm.Request, model string) (int, error) {
	n := req.Native
	if n == nil || n.Wire != "anthropic" {
		return 0, &llm.Error{Kind: llm.Unsupported, Message: c.name + ": only a Messages request can be counted"}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(n.Body, &m); err != nil {
		return 0, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "anthropic: the request body is not a JSON object"}
	}
	m["model"], _ = wire.Marshal(model)
	delete(m, "stream")
	delete(m, "max_tokens")
	body, _ := wire.Marshal(m)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/count_tokens", bytes.NewReader(body))
	if err != nil {
		return 0, &llm.Error{Kind: llm.Internal, Message: c.name + ": cannot build the request", Err: err}
	}
	hr.Header = c.header.Clone()
	hr.Header.Set("Accept", "application/json")
	for k, v := range n.Header {
		hr.Header.Set(k, v)
	}
	res, err := c.hc.Do(hr)
	if err != nil {
		return 0, c.callError(ctx, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return 0, c.statusError(res.StatusCode, res.Header, b)
	}
	var out struct {
		InputTokens *int `json:"input_tokens"`
	}
	if json.Unmarshal(b, &out) != nil || out.InputTokens == nil {
		return 0, &llm.Error{Kind: llm.Unavailable, Status: res.StatusCode, Message: c.name + " answered count_tokens without input_tokens"}
	}
	return *out.InputTokens, nil
}
