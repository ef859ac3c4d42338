package embeddings

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// API is the embeddings wire: POST /v1/embeddings, served by an embeddings alias or a direct
// target of a provider that serves embeddings (Target).
var API = Wire("embeddings", "/v1/embeddings", "embeddings", Decode, Usage)

// Wire is the API of a plain endpoint (embeddings, moderations, images, rerank): POST path,
// with the OpenAI SDKs' keys and errors, its body checked by decode, served on its targets'
// upstream path, usage read from its answer.
func Wire(name, path, upstream string, decode func([]byte) (string, *llm.Request, error), usage func([]byte) (llm.Usage, bool)) dialect.API {
	return dialect.API{
		Name:       name,
		Routes:     []dialect.Route{{Method: http.MethodPost, Path: path, Op: dialect.Embed}},
		Credential: dialect.Bearer | dialect.XAPIKey,
		Decode: func(body []byte, _ dialect.Input) (*dialect.Decoded, error) {
			model, req, err := decode(body)
			if err != nil {
				return nil, err
			}
			return &dialect.Decoded{Model: model, Req: req}, nil
		},
		Error:    oai.Error,
		Upstream: upstream,
		Usage:    usage,
	}
}
