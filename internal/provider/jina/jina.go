// Package jina is Jina AI's rerank API as a route of the retrieval adapter (issue 48): POST
// /v1/rerank, whose shape is the client's (documents as strings or objects with a text,
// top_n, return_documents; usage in tokens), so the body passes with its model set and the
// answer is checked and passed on unchanged. Errors are {"detail": ...}. Shape:
// https://jina.ai/reranker (the API tab).
package jina

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// BaseURL is Jina's API.
const BaseURL = "https://api.jina.ai/v1"

// Routes are the plain endpoints Jina serves.
var Routes = map[string]retrieval.Route{
	"rerank": {Path: "rerank", Request: rerankRequest, Answer: retrieval.RerankAnswer},
}

func rerankRequest(model string, body []byte) ([]byte, error) {
	var m map[string]json.RawMessage // the client's members, all: Jina's are the client's
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	m["model"], _ = json.Marshal(model)
	return json.Marshal(m)
}
