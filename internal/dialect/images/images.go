// Package images is the OpenAI image generation client wire (POST /v1/images/generations,
// issue 48): Decode validates a body and keeps its members for the upstream, Usage counts
// the images of the answer (priced per image) and the tokens it reports (gpt-image-1). The
// answer is passed through unchanged.
package images

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// DefaultModel is the model of a body that names none, as OpenAI's.
const DefaultModel = "dall-e-2"

// API is the image generation wire, served by an images alias or a direct target of a
// provider that serves images.
var API = embeddings.Wire("images", "/v1/images/generations", "images/generations", Decode, Usage)

// Decode checks an image generation body: a prompt, and the members OpenAI types. A
// streamed generation is refused: the gateway passes one answer through.
func Decode(body []byte) (string, *llm.Request, error) {
	return embeddings.DecodePlain(body, DefaultModel, func(key string, raw json.RawMessage) error {
		switch key {
		case "prompt":
			var p string
			if json.Unmarshal(raw, &p) != nil {
				return oai.TypeErr(key, "a string")
			}
			if p == "" || len(p) > 32000 {
				return oai.Invalid(key, "Invalid 'prompt': expected a string of 1 to 32000 characters.")
			}
		case "n":
			return embeddings.Int(key, raw, 1, 10)
		case "output_compression":
			return embeddings.Int(key, raw, 0, 100)
		case "response_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || (f != "url" && f != "b64_json") {
				return oai.Invalid(key, "Invalid value for 'response_format'. Supported values are: 'url' and 'b64_json'.")
			}
		case "size", "quality", "style", "user", "background", "moderation", "output_format":
			return embeddings.String(key, raw)
		case "stream", "partial_images":
			if string(raw) != "false" && string(raw) != "null" && string(raw) != "0" {
				return oai.Invalid(key, "Streamed image generation is not served by the gateway: leave out '%s'.", key)
			}
		}
		return nil
	}, "prompt")
}

// Usage is what an answer bills: its images (Units), and the tokens it reports, if any.
func Usage(raw []byte) (llm.Usage, bool) {
	var a struct {
		Data  []struct{} `json:"data"`
		Usage *struct {
			In    int `json:"input_tokens"`
			Out   int `json:"output_tokens"`
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return llm.Usage{}, false
	}
	u := llm.Usage{Units: len(a.Data)}
	if a.Usage != nil {
		u.PromptTokens, u.CompletionTokens, u.TotalTokens = a.Usage.In, a.Usage.Out, a.Usage.Total
	}
	return u, true
}
