// Package rerank is the rerank client wire in the Cohere/Jina shape (POST /v1/rerank, issue
// 48), which Cohere, Jina, vLLM and Infinity serve: Decode validates a body and keeps its
// members for the upstream, Usage reads the search units (Cohere) or tokens (Jina, vLLM)
// the answer bills. The answer is passed through unchanged.
package rerank

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// API is the rerank wire, served by a rerank alias or a direct target of a provider that
// serves rerank.
var API = embeddings.Wire("rerank", "/v1/rerank", "rerank", Decode, Usage)

// MaxDocuments is the most documents a request may rank (Cohere's limit).
const MaxDocuments = 1000

// Decode checks a rerank body: a model, a query, and 1 to 1000 documents, each a string or
// an object with a text (Jina's).
func Decode(body []byte) (string, *llm.Request, error) {
	return embeddings.DecodePlain(body, "", func(key string, raw json.RawMessage) error {
		switch key {
		case "query":
			var q string
			if json.Unmarshal(raw, &q) != nil {
				return oai.TypeErr(key, "a string")
			}
			if q == "" {
				return oai.Invalid(key, "Invalid 'query': empty string.")
			}
		case "documents":
			return documents(raw)
		case "top_n", "max_chunks_per_doc", "max_tokens_per_doc":
			return embeddings.Int(key, raw, 1, 1<<20)
		case "return_documents":
			var b bool
			if json.Unmarshal(raw, &b) != nil {
				return oai.TypeErr(key, "a boolean")
			}
		}
		return nil
	}, "query", "documents")
}

func documents(raw json.RawMessage) error {
	const want = "an array of strings or of objects with a text"
	var docs []json.RawMessage
	if json.Unmarshal(raw, &docs) != nil {
		return oai.TypeErr("documents", want)
	}
	if len(docs) == 0 || len(docs) > MaxDocuments {
		return oai.Invalid("documents", "Invalid 'documents': expected an array of 1 to %d items.", MaxDocuments)
	}
	for _, d := range docs {
		var s string
		var o struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(d, &s) != nil && (json.Unmarshal(d, &o) != nil || o.Text == nil) {
			return oai.TypeErr("documents", want)
		}
	}
	return nil
}

// Usage is what an answer bills: Cohere's search units (meta.billed_units), and the tokens
// Jina and vLLM report (usage.total_tokens).
func Usage(raw []byte) (llm.Usage, bool) {
	var a struct {
		Meta *struct {
			Billed struct {
				SearchUnits int `json:"search_units"`
			} `json:"billed_units"`
		} `json:"meta"`
		Usage *struct {
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(raw, &a) != nil || (a.Meta == nil && a.Usage == nil) {
		return llm.Usage{}, false
	}
	var u llm.Usage
	if a.Meta != nil {
		u.Units = a.Meta.Billed.SearchUnits
	}
	if a.Usage != nil {
		u.PromptTokens, u.TotalTokens = a.Usage.Total, a.Usage.Total
	}
	return u, true
}
