package chat

import (
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the Chat Completions wire: POST /v1/chat/completions.
var API = dialect.API{
	Name:       "chat",
	Routes:     []dialect.Route{{Method: http.MethodPost, Path: "/v1/chat/completions", Op: dialect.Call}},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, _ dialect.Input) (*dialect.Decoded, error) {
		cr, err := Decode(body)
		if err != nil {
			return nil, err
		}
		return &dialect.Decoded{Model: cr.Model, Req: &cr.Req, Answer: func(id string) dialect.Wire {
			return NewWire("chatcmpl-"+id, time.Now().Unix(), cr.Req.IncludeUsage)
		}}, nil
	},
	Error: oai.Error,
}
