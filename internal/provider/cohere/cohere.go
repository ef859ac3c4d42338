// Package cohere is the Cohere API's wire as routes of the retrieval adapter (issue 48):
// POST /v2/rerank, whose shape is the client's but for its documents (strings only), and
// POST /v2/embed, translated to and from OpenAI's embeddings. Errors are {"message": ...}
// (retrieval.ErrorMessage reads them). Shapes: https://docs.cohere.com/reference/rerank,
// https://docs.cohere.com/reference/embed, https://docs.cohere.com/reference/errors.
package cohere

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
	"github.com/sluice-gw/sluice/internal/schema/openai"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// BaseURL is Cohere's API.
const BaseURL = "https://api.cohere.com"

// Routes are the plain endpoints Cohere serves.
var Routes = map[string]retrieval.Route{
	"rerank":     {Path: "v2/rerank", Request: rerankRequest, Answer: retrieval.RerankAnswer},
	"embeddings": {Path: "v2/embed", Request: embedRequest, Answer: embedAnswer},
}

// rerankBody is the v2 rerank request: documents are strings, and there is no
// return_documents (the answer's documents are put back from the request's).
type rerankBody struct {
	Model           string   `json:"model"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            *int     `json:"top_n,omitempty"`
	MaxTokensPerDoc *int     `json:"max_tokens_per_doc,omitempty"`
}

func rerankRequest(model string, body []byte) ([]byte, error) {
	r, texts, err := retrieval.Rerank(body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(rerankBody{Model: model, Query: r.Query, Documents: texts, TopN: r.TopN, MaxTokensPerDoc: r.MaxTokensPerDoc})
}

// embedBody is the v2 embed request. input_type is required by the v3 models and later: the
// client's (an extra member of the OpenAI body), else search_document.
type embedBody struct {
	Model           string   `json:"model"`
	Texts           []string `json:"texts"`
	InputType       string   `json:"input_type"`
	EmbeddingTypes  []string `json:"embedding_types"`
	Truncate        string   `json:"truncate,omitempty"`
	OutputDimension *int     `json:"output_dimension,omitempty"`
}

// embedClient is what the translation reads of the client's OpenAI embeddings body.
type embedClient struct {
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	InputType      string          `json:"input_type"`
	Truncate       string          `json:"truncate"`
}

func readEmbed(body []byte) (embedClient, []string, error) {
	var c embedClient
	if err := json.Unmarshal(body, &c); err != nil {
		return c, nil, err
	}
	var one string
	var texts []string
	switch {
	case json.Unmarshal(c.Input, &one) == nil:
		texts = []string{one}
	case json.Unmarshal(c.Input, &texts) == nil:
	default:
		return c, nil, errors.New("input must be a string or an array of strings (Cohere embeds text, not tokens)")
	}
	return c, texts, nil
}

func embedRequest(model string, body []byte) ([]byte, error) {
	c, texts, err := readEmbed(body)
	if err != nil {
		return nil, err
	}
	if c.InputType == "" {
		c.InputType = "search_document"
	}
	return json.Marshal(embedBody{Model: model, Texts: texts, InputType: c.InputType,
		EmbeddingTypes: []string{"float"}, Truncate: c.Truncate, OutputDimension: c.Dimensions})
}

// embedAnswer is Cohere's embeddings_by_type answer as OpenAI's list, with base64 vectors
// when the client asked for them (the OpenAI SDKs do by default).
func embedAnswer(model string, body, out []byte) ([]byte, error) {
	c, texts, err := readEmbed(body)
	if err != nil {
		return nil, err
	}
	var a struct {
		Embeddings struct {
			Float [][]float32 `json:"float"`
		} `json:"embeddings"`
		Meta *rerank.Meta `json:"meta"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, err
	}
	if len(a.Embeddings.Float) != len(texts) {
		return nil, errors.New("not one float embedding per text")
	}
	l := openai.EmbeddingList{Object: "list", Model: model, Data: make([]openai.Embedding, len(texts))}
	for i, v := range a.Embeddings.Float {
		l.Data[i] = openai.Embedding{Object: "embedding", Index: i, Embedding: v}
		if c.EncodingFormat == "base64" {
			l.Data[i].Embedding = floats64(v)
		}
	}
	if a.Meta != nil && a.Meta.BilledUnits != nil {
		n := a.Meta.BilledUnits.InputTokens
		l.Usage = openai.EmbeddingsUsage{PromptTokens: n, TotalTokens: n}
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
