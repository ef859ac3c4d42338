// Package voyage is Voyage AI's API as routes of the retrieval adapter (issue 48): POST
// /v1/rerank, translated from the client's Cohere/Jina shape (top_n is top_k, documents
// are strings) and its answer back (data is results, a document's string its text), and
// POST /v1/embeddings, OpenAI's shape but for its usage (total_tokens only, which becomes
// prompt_tokens too). Errors are {"detail": ...}. Shapes:
// https://docs.voyageai.com/reference/reranker-api,
// https://docs.voyageai.com/reference/embeddings-api.
package voyage

import (
	"encoding/json"
	"errors"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
	"github.com/sluice-gw/sluice/internal/schema/openai"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
	wire "github.com/sluice-gw/sluice/internal/schema/voyage"
)

// BaseURL is Voyage's API.
const BaseURL = "https://api.voyageai.com/v1"

// Routes are the plain endpoints Voyage serves.
var Routes = map[string]retrieval.Route{
	"rerank":     {Path: "rerank", Request: rerankRequest, Answer: rerankAnswer},
	"embeddings": {Path: "embeddings", Request: embedRequest, Answer: embedAnswer},
}

func rerankRequest(model string, body []byte) ([]byte, error) {
	r, texts, err := retrieval.Rerank(body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire.RerankRequest{Query: r.Query, Documents: texts, Model: model, TopK: r.TopN,
		ReturnDocuments: r.ReturnDocuments, Truncation: r.Truncation})
}

// rerankAnswer is Voyage's answer in the Cohere/Jina shape: results, the model, usage in
// tokens.
func rerankAnswer(_ string, body, out []byte) ([]byte, error) {
	r, texts, err := retrieval.Rerank(body)
	if err != nil {
		return nil, err
	}
	var v wire.RerankAnswer
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	if v.Data == nil {
		return nil, errors.New("no data")
	}
	a := rerank.Answer{Model: v.Model, Results: make([]rerank.Result, len(v.Data)),
		Usage: &rerank.Usage{PromptTokens: v.Usage.TotalTokens, TotalTokens: v.Usage.TotalTokens}}
	for i, d := range v.Data {
		a.Results[i] = rerank.Result{Index: d.Index, RelevanceScore: d.RelevanceScore}
		if d.Document != nil {
			a.Results[i].Document = &rerank.Document{Text: d.Document}
		}
	}
	if _, err := retrieval.Ranked(&a, r, texts); err != nil {
		return nil, err
	}
	return json.Marshal(a)
}

func embedRequest(model string, body []byte) ([]byte, error) {
	var m map[string]json.RawMessage // OpenAI's members, and Voyage's own (input_type, truncation)
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if string(m["encoding_format"]) == `"float"` { // Voyage's default, which it names null
		delete(m, "encoding_format")
	}
	// OpenAI's end-user id: Voyage has none.
	delete(m, "user")
	if d, ok := m["dimensions"]; ok { // Voyage's name for it
		m["output_dimension"] = d
		delete(m, "dimensions")
	}
	m["model"], _ = json.Marshal(model)
	return json.Marshal(m)
}

// embedAnswer is Voyage's answer with OpenAI's usage.
func embedAnswer(_ string, _, out []byte) ([]byte, error) {
	var v wire.EmbeddingsAnswer
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	if v.Data == nil {
		return nil, errors.New("no data")
	}
	return json.Marshal(struct {
		wire.EmbeddingsAnswer
		Usage openai.EmbeddingsUsage `json:"usage"`
	}{v, openai.EmbeddingsUsage{PromptTokens: v.Usage.TotalTokens, TotalTokens: v.Usage.TotalTokens}})
}
