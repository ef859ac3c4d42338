// Package moderations is the OpenAI moderations client wire (POST /v1/moderations, issue 48):
// Decode validates a body and keeps its members for the upstream; the answer is passed
// through unchanged. Moderations are free upstream: a call is counted, not priced.
package moderations

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// DefaultModel is the model of a body that names none, as OpenAI's.
const DefaultModel = "omni-moderation-latest"

// API is the moderations wire, served by a moderations alias or a direct target of a
// provider that serves moderations.
var API = embeddings.Wire("moderations", "/v1/moderations", "moderations", Decode, func([]byte) (llm.Usage, bool) { return llm.Usage{}, false })

// Decode checks a moderations body: input is a string, an array of strings, or an array
// of text and image_url parts, never empty.
func Decode(body []byte) (string, *llm.Request, error) {
	return embeddings.DecodePlain(body, DefaultModel, func(key string, raw json.RawMessage) error {
		if key == "input" {
			return input(raw)
		}
		return nil
	}, "input")
}

const inputWant = "a string, an array of strings, or an array of text and image_url objects"

func input(raw json.RawMessage) error {
	many, err := embeddings.Input(raw, inputWant)
	if err != nil || many == nil {
		return err
	}
	if len(many) == 0 {
		return oai.Invalid("input", "Invalid 'input': empty array. Expected at least one item.")
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return nil
	}
	var parts []struct {
		Type     string  `json:"type"`
		Text     *string `json:"text"`
		ImageURL *struct {
			URL *string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return oai.TypeErr("input", inputWant)
	}
	for _, p := range parts {
		switch {
		case p.Type == "text" && p.Text != nil, p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != nil:
		default:
			return oai.Invalid("input", "Invalid 'input': each part is {\"type\": \"text\", \"text\": ...} or {\"type\": \"image_url\", \"image_url\": {\"url\": ...}}.")
		}
	}
	return nil
}
