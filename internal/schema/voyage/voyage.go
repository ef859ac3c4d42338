// Package voyage holds the wire types of the Voyage AI API (POST /v1/rerank, POST
// /v1/embeddings), once. It decides nothing: the adapter (provider/voyage) translates, and
// its tests' upstream speaks these types. Errors are {"detail": "..."}.
//
// Shapes: https://docs.voyageai.com/reference/reranker-api and
// https://docs.voyageai.com/reference/embeddings-api.
package voyage

import "encoding/json"

// RerankRequest is a rerank request: the documents are strings only.
type RerankRequest struct {
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	Model           string   `json:"model"`
	TopK            *int     `json:"top_k,omitempty"`
	ReturnDocuments *bool    `json:"return_documents,omitempty"`
	Truncation      *bool    `json:"truncation,omitempty"`
}

// RerankAnswer is a rerank answer, object "list": the results, best first.
type RerankAnswer struct {
	Object string         `json:"object"`
	Data   []RerankResult `json:"data"`
	Model  string         `json:"model"`
	Usage  Usage          `json:"usage"`
}

// RerankResult is one ranked document; Document is its text, with return_documents.
type RerankResult struct {
	Index          int     `json:"index"`
	RelevanceScore float64 `json:"relevance_score"`
	Document       *string `json:"document,omitempty"`
}

// Usage is what a call read, in tokens.
type Usage struct {
	TotalTokens int `json:"total_tokens"`
}

// EmbeddingsAnswer is an embeddings answer: OpenAI's shape, but usage has total_tokens
// only.
type EmbeddingsAnswer struct {
	Object string            `json:"object"`
	Data   []json.RawMessage `json:"data"`
	Model  string            `json:"model"`
	Usage  Usage             `json:"usage"`
}
