package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// nativeBody is the body of a Messages client's own request (llm.Request.Native) for the
// target's model, always streamed: every other member goes on as the client wrote it
// (cache_control, thinking blocks and their signatures, server tools, members this adapter
// does not know), which a translation through llm would lose. It also says how many
// breakpoints it removed: the earliest, beyond Anthropic's 4 (trimNative).
func nativeBody(body json.RawMessage, model string) ([]byte, int, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, 0, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "anthropic: the request body is not a JSON object"}
	}
	mb, _ := wire.Marshal(model)
	m["model"], m["stream"] = mb, json.RawMessage("true")
	dropped := trimNative(body, m)
	if msgs, ok := unsigned(m["messages"]); ok {
		m["messages"] = msgs
	}
	b, err := wire.Marshal(m)
	if err != nil {
		return nil, 0, &llm.Error{Kind: llm.Internal, Message: "anthropic: cannot encode the request", Err: err}
	}
	return b, dropped, nil
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
	hr.Header = c.ep.Header.Clone()
	hr.Header.Set("Accept", "application/json")
	for k, v := range n.Header {
		hr.Header.Set(k, v)
	}
	res, err := c.ep.Client.Do(hr)
	if err != nil {
		return 0, transport.Error(ctx, c.name, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, transport.MaxErrorBody))
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

// unsigned returns the messages without the thinking blocks that have no signature, and
// whether there were any: thinking another provider wrote (a Chat target's reasoning, handed
// back by the client as a thinking block) cannot be verified, and the API refuses the whole
// request for it. Every other block goes on as it came.
func unsigned(raw json.RawMessage) (json.RawMessage, bool) {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return nil, false
	}
	dropped := false
	out := msgs[:0]
	for _, m := range msgs {
		var blocks []json.RawMessage
		if json.Unmarshal(m["content"], &blocks) != nil {
			out = append(out, m) // a string
			continue
		}
		kept := blocks[:0]
		for _, b := range blocks {
			var h struct {
				Type      string  `json:"type"`
				Signature *string `json:"signature"`
			}
			if json.Unmarshal(b, &h) == nil && h.Type == "thinking" && (h.Signature == nil || *h.Signature == "") {
				dropped = true
				continue
			}
			kept = append(kept, b)
		}
		if len(kept) == 0 {
			continue // a turn of nothing but such thinking: the API refuses empty content
		}
		m["content"], _ = wire.Marshal(kept)
		out = append(out, m)
	}
	if !dropped {
		return nil, false
	}
	b, err := wire.Marshal(out)
	return b, err == nil
}
