// Package rerank holds the wire types of the rerank API in the Cohere/Jina shape (Cohere's
// POST /v2/rerank, Jina's POST /v1/rerank, the gateway's /v1/rerank), once. It decides
// nothing: the client wire (dialect/rerank) checks a request, the adapters translate, and
// their tests' upstreams speak these types.
//
// Shapes: https://docs.cohere.com/reference/rerank and https://jina.ai/reranker (the API
// tab). Cohere's v2 takes documents as strings only; Jina's and the client's also as
// objects with a text.
package rerank

import "encoding/json"

// Request is a rerank request. Documents are strings or objects with a text (Document);
// Texts reads them.
type Request struct {
	Model           string            `json:"model"`
	Query           string            `json:"query"`
	Documents       []json.RawMessage `json:"documents"`
	TopN            *int              `json:"top_n,omitempty"`
	ReturnDocuments *bool             `json:"return_documents,omitempty"`
	MaxTokensPerDoc *int              `json:"max_tokens_per_doc,omitempty"`
	// Truncation is Voyage's, which some clients send in the Cohere shape too.
	Truncation *bool `json:"truncation,omitempty"`
}

// Texts are the documents' texts, in order; false when one is neither a string nor an
// object with a text.
func (r *Request) Texts() ([]string, bool) {
	out := make([]string, len(r.Documents))
	for i, d := range r.Documents {
		var doc Document
		if json.Unmarshal(d, &out[i]) != nil && (json.Unmarshal(d, &doc) != nil || doc.Text == nil) {
			return nil, false
		}
		if doc.Text != nil {
			out[i] = *doc.Text
		}
	}
	return out, true
}

// Document is a document as an object: its text (Jina's and Cohere v1's answers carry
// documents so).
type Document struct {
	Text *string `json:"text"`
}

// Answer is a rerank answer: the results, best first; Cohere's meta (billed search units)
// or Jina's usage (tokens).
type Answer struct {
	ID      string   `json:"id,omitempty"`
	Model   string   `json:"model,omitempty"`
	Results []Result `json:"results"`
	Meta    *Meta    `json:"meta,omitempty"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Result is one ranked document: its index in the request, its score, and with
// return_documents its text.
type Result struct {
	Index          int       `json:"index"`
	RelevanceScore float64   `json:"relevance_score"`
	Document       *Document `json:"document,omitempty"`
}

// Meta is Cohere's meta: the API version and what the call billed.
type Meta struct {
	APIVersion  *APIVersion  `json:"api_version,omitempty"`
	BilledUnits *BilledUnits `json:"billed_units,omitempty"`
}

// APIVersion is Cohere's meta.api_version.
type APIVersion struct {
	Version string `json:"version"`
}

// BilledUnits is what a Cohere call billed: search units for rerank, input tokens for embed.
type BilledUnits struct {
	SearchUnits int `json:"search_units,omitempty"`
	InputTokens int `json:"input_tokens,omitempty"`
}

// Usage is Jina's usage: the tokens the call read.
type Usage struct {
	PromptTokens int `json:"prompt_tokens,omitempty"`
	TotalTokens  int `json:"total_tokens"`
}
