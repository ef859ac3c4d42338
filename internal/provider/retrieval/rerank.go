package retrieval

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// Rerank reads the client's rerank body (the Cohere/Jina shape, checked by the client wire):
// the request and its documents' texts.
func Rerank(body []byte) (*rerank.Request, []string, error) {
	var r rerank.Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, err
	}
	texts, ok := r.Texts()
	if !ok {
		return nil, nil, errors.New("documents must be strings or objects with a text")
	}
	return &r, texts, nil
}

// Ranked checks a, an answer in the Cohere/Jina shape, against the request's texts: results
// present, each index one of the documents'. When the client asked for the documents
// (return_documents) each result without one gets its text, and ok is true: the answer
// changed.
func Ranked(a *rerank.Answer, r *rerank.Request, texts []string) (ok bool, err error) {
	if a.Results == nil {
		return false, errors.New("no results")
	}
	want := r.ReturnDocuments != nil && *r.ReturnDocuments
	for i := range a.Results {
		res := &a.Results[i]
		if res.Index < 0 || res.Index >= len(texts) {
			return false, fmt.Errorf("result %d ranks document %d of %d", i, res.Index, len(texts))
		}
		if want && (res.Document == nil || res.Document.Text == nil) {
			res.Document, ok = &rerank.Document{Text: &texts[res.Index]}, true
		}
	}
	return ok, nil
}

// RerankAnswer is a Route's Answer for an upstream whose answer is in the client's shape
// (Cohere's, Jina's): out checked (Ranked), unchanged unless documents the client asked for
// were added.
func RerankAnswer(_ string, body, out []byte) ([]byte, error) {
	r, texts, err := Rerank(body)
	if err != nil {
		return nil, err
	}
	var a rerank.Answer
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, err
	}
	if changed, err := Ranked(&a, r, texts); err != nil || !changed {
		return out, err
	}
	return json.Marshal(a)
}

// QueryDocuments is how many documents a billed query of the clouds' rerankers holds:
// Bedrock's Rerank and Vertex AI's ranking API bill one query per 100 documents.
const QueryDocuments = 100

// Scored is the answer in the client's shape of an upstream that scores the documents
// without Cohere's answer (Bedrock's Rerank, Vertex AI's ranking API): results, best first,
// as it ranked them (checked, and with their texts when the client asked for them: Ranked),
// and the search units of the request's documents (one per QueryDocuments begun) as Cohere's
// billed units, which the client wire prices. No results is an error.
func Scored(model string, results []rerank.Result, r *rerank.Request, texts []string) ([]byte, error) {
	a := rerank.Answer{Model: model, Results: results, Meta: &rerank.Meta{BilledUnits: &rerank.BilledUnits{
		SearchUnits: max(1, (len(texts)+QueryDocuments-1)/QueryDocuments)}}}
	if _, err := Ranked(&a, r, texts); err != nil {
		return nil, err
	}
	return json.Marshal(a)
}

// RerankCall reads a plain call of path for provider name that serves rerank only with its
// own API (Bedrock, Vertex AI): the client's rerank body (Rerank); another path is
// NotServed, a body the wire cannot carry Refused.
func RerankCall(name, path string, body []byte) (*rerank.Request, []string, error) {
	if path != "rerank" {
		return nil, nil, NotServed(name, path)
	}
	r, texts, err := Rerank(body)
	if err != nil {
		return nil, nil, Refused(name, path, err)
	}
	return r, texts, nil
}
