package responses

import (
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the Responses wire: POST /v1/responses. A request that names what lives in an
// OpenAI Responses upstream's store (Request.NativeOnly) Needs such a target.
//
// With the gateway keeping state (dialect.Input.State, state.go), store: true keeps the
// answer and previous_response_id is any target's to serve; the stored responses are read
// and deleted at /v1/responses/{id}.
var API = dialect.API{
	Name: "responses",
	Routes: []dialect.Route{
		{Method: http.MethodPost, Path: "/v1/responses", Op: dialect.Call},
		{Method: http.MethodGet, Path: "/v1/responses/:id", Op: dialect.Kept},
		{Method: http.MethodDelete, Path: "/v1/responses/:id", Op: dialect.Kept},
		{Method: http.MethodGet, Path: "/v1/responses/:id/input_items", Op: dialect.Kept},
	},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, in dialect.Input) (*dialect.Decoded, error) {
		rr, err := Decode(body)
		if err != nil {
			return nil, err
		}
		// The model is the client's until a target commits, then the served one, as in chat.
		d := &dialect.Decoded{Model: rr.Model, Req: &rr.Req, Needs: rr.NativeOnly(), Answer: func(id string) dialect.Wire {
			return NewWire(id, time.Now().Unix(), rr)
		}}
		keepState(d, rr, in)
		return d, nil
	},
	Error: oai.Error,
	Kept:  serveKept,
}
