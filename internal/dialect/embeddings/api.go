package embeddings

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the embeddings wire: POST /v1/embeddings, served by an embeddings alias or a direct
// target of a provider that serves embeddings (Target).
var API = dialect.API{
	Name:       "embeddings",
	Routes:     []dialect.Route{{Method: http.MethodPost, Path: "/v1/embeddings", Op: dialect.Embed}},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, _ dialect.Input) (*dialect.Decoded, error) {
		model, req, err := Decode(body)
		if err != nil {
			return nil, err
		}
		return &dialect.Decoded{Model: model, Req: req}, nil
	},
	Error:    oai.Error,
	Upstream: "embeddings",
	Usage:    Usage,
}
