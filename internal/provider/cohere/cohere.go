// Package cohere is the Cohere API's wire as routes of the retrieval adapter (issue 48):
// POST /v2/rerank, whose shape is the client's but for its documents (strings only), and
// POST /v2/embed, translated to and from OpenAI's embeddings. Errors are {"message": ...}
// (retrieval.ErrorMessage reads them). Shapes: https://docs.cohere.com/reference/rerank,
// https://docs.cohere.com/reference/embed, https://docs.cohere.com/reference/errors.
package cohere

import (
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

func embedRequest(model string, body []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Cohere")
	if err != nil {
		return nil, err
	}
	if e.InputType == "" {
		e.InputType = "search_document"
	}
	return json.Marshal(embedBody{Model: model, Texts: e.Texts, InputType: e.InputType,
		EmbeddingTypes: []string{"float"}, Truncate: e.Truncate, OutputDimension: e.Dimensions})
}

// embedAnswer is Cohere's embeddings_by_type answer as OpenAI's list.
func embedAnswer(model string, body, out []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Cohere")
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
	n := 0
	if a.Meta != nil && a.Meta.BilledUnits != nil {
		n = a.Meta.BilledUnits.InputTokens
	}
	return e.List(model, a.Embeddings.Float, n)
}
