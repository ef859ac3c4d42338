package anthropic

import (
	"net/http"
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
)

// API is the Messages wire: POST /v1/messages on the same chain, relay and event writer as
// chat, so any adapter serves it (an Anthropic target gets the client's body as it came,
// llm.Request.Native), and POST /v1/messages/count_tokens. Its errors, keepalives and
// Request-Id header are Anthropic's; 529 when every target tried was overloaded, which
// Anthropic's SDKs retry.
var API = dialect.API{
	Name: "messages",
	Routes: []dialect.Route{
		{Method: http.MethodPost, Path: "/v1/messages", Op: dialect.Call},
		{Method: http.MethodPost, Path: "/v1/messages/count_tokens", Op: dialect.Count},
	},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, in dialect.Input) (*dialect.Decoded, error) {
		if in.Op == dialect.Count {
			r, err := DecodeCount(body, in.Header)
			if err != nil {
				return nil, err
			}
			return &dialect.Decoded{Model: r.Model, Req: &r.Req, Estimate: func() int { return Estimate(r) }}, nil
		}
		r, err := Decode(body, in.Header)
		if err != nil {
			return nil, err
		}
		return &dialect.Decoded{Model: r.Model, Req: &r.Req, Answer: func(id string) dialect.Wire {
			return NewWire("msg_" + id)
		}}, nil
	},
	Error:     func(err error, tries []llm.Attempt) (int, []byte) { return Error(err, AllOverloaded(tries)) },
	Retried:   StatusOverloaded,
	Keepalive: Keepalive, // event: ping, which the Anthropic SDKs skip
	Counted:   func(n int) []byte { return []byte(`{"input_tokens":` + strconv.Itoa(n) + `}`) },
	RequestID: "Request-Id",
}
