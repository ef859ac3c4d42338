package retrieval

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// Embed is what a translation reads of the client's OpenAI embeddings body, for an API
// that embeds texts in its own wire (Cohere, Bedrock, Vertex AI): the texts, the encoding
// the client wants back, the dimensions, and the input type and truncation some APIs take
// (extra members of the OpenAI body).
type Embed struct {
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	InputType      string          `json:"input_type"`
	Truncate       string          `json:"truncate"`
	// Texts is input as texts.
	Texts []string `json:"-"`
}

// ReadEmbed reads body, an embeddings body the client wire checked. Its input must be text
// (a string or strings): who, the provider's name in the error, embeds no tokens.
func ReadEmbed(body []byte, who string) (*Embed, error) {
	var e Embed
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, err
	}
	var one string
	switch {
	case json.Unmarshal(e.Input, &one) == nil:
		e.Texts = []string{one}
	case json.Unmarshal(e.Input, &e.Texts) == nil:
	default:
		return nil, errors.New("input must be a string or an array of strings (" + who + " embeds text, not tokens)")
	}
	return &e, nil
}

// List is the OpenAI answer of vectors, one per text of e in order, with base64 vectors
// when the client asked for them (the OpenAI SDKs do by default), and tokens as its usage.
// Not one vector per text is an error.
func (e *Embed) List(model string, vectors [][]float32, tokens int) ([]byte, error) {
	if len(vectors) != len(e.Texts) {
		return nil, errors.New("not one float embedding per text")
	}
	l := openai.EmbeddingList{Object: "list", Model: model, Data: make([]openai.Embedding, len(vectors)),
		Usage: openai.EmbeddingsUsage{PromptTokens: tokens, TotalTokens: tokens}}
	for i, v := range vectors {
		l.Data[i] = openai.Embedding{Object: "embedding", Index: i, Embedding: v}
		if e.EncodingFormat == "base64" {
			l.Data[i].Embedding = floats64(v)
		}
	}
	return json.Marshal(l)
}

// floats64 is v as OpenAI's base64 encoding: little-endian float32s.
func floats64(v []float32) string {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
