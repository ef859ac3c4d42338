// Package cohere is the Cohere API's wire as routes of the retrieval adapter (issue 48):
// POST /v2/rerank, whose shape is the client's but for its documents (strings only), and
// POST /v2/embed, translated to and from OpenAI's embeddings. Errors are {"message": ...}
// (retrieval.ErrorMessage reads them). Shapes: https://docs.cohere.com/reference/rerank,
// https://docs.cohere.com/reference/embed, https://docs.cohere.com/reference/errors.
package cohere

import (
	"cmp"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
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

// EmbedBody is the v2 embed request, which Bedrock's Cohere models take too (without the
// model, which is the path's there). input_type is required by the v3 models and later.
type EmbedBody struct {
	Model           string   `json:"model,omitempty"`
	Texts           []string `json:"texts"`
	InputType       string   `json:"input_type"`
	EmbeddingTypes  []string `json:"embedding_types"`
	Truncate        string   `json:"truncate,omitempty"`
	OutputDimension *int     `json:"output_dimension,omitempty"`
}

// Embedding is the embed request of texts, some of e's, with model: float vectors, the
// client's input_type (an extra member of the OpenAI body), else search_document, its
// truncate, and its dimensions as output_dimension.
func Embedding(model string, e *retrieval.Embed, texts []string) EmbedBody {
	return EmbedBody{Model: model, Texts: texts, InputType: cmp.Or(e.InputType, "search_document"),
		EmbeddingTypes: []string{"float"}, Truncate: e.Truncate, OutputDimension: e.Dimensions}
}

// EmbedAnswer is the embed answer of embedding_types float: a vector per text, and on
// Cohere's API what it billed.
type EmbedAnswer struct {
	Embeddings struct {
		Float [][]float32 `json:"float"`
	} `json:"embeddings"`
	Meta *rerank.Meta `json:"meta"`
}

func embedRequest(model string, body []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Cohere")
	if err != nil {
		return nil, err
	}
	return json.Marshal(Embedding(model, e, e.Texts))
}

// embedAnswer is Cohere's embeddings_by_type answer as OpenAI's list.
func embedAnswer(model string, body, out []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Cohere")
	if err != nil {
		return nil, err
	}
	var a EmbedAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, err
	}
	n := 0
	if a.Meta != nil && a.Meta.BilledUnits != nil {
		n = a.Meta.BilledUnits.InputTokens
	}
	return e.List(model, a.Embeddings.Float, n)
}
