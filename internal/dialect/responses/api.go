package responses

import (
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the Responses wire: POST /v1/responses. A request that names what lives in an
// OpenAI Responses upstream's store (Request.NativeOnly) Needs such a target.
var API = dialect.API{
	Name:       "responses",
	Routes:     []dialect.Route{{Method: http.MethodPost, Path: "/v1/responses", Op: dialect.Call}},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, _ dialect.Input) (*dialect.Decoded, error) {
		rr, err := Decode(body)
		if err != nil {
			return nil, err
		}
		// The model is the client's until a target commits, then the served one, as in chat.
		return &dialect.Decoded{Model: rr.Model, Req: &rr.Req, Needs: rr.NativeOnly(), Answer: func(id string) dialect.Wire {
			return NewWire(id, time.Now().Unix(), rr)
		}}, nil
	},
	Error: oai.Error,
}
