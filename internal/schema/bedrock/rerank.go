package bedrock

import "encoding/json"

// The Rerank API of Agents for Amazon Bedrock Runtime (POST /rerank on
// bedrock-agent-runtime.{region}.amazonaws.com), which serves the reranker models
// (amazon.rerank-v1:0, cohere.rerank-v3-5:0) in one shape. Shape:
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Rerank.html.

// RerankRequest is the Rerank body: one text query, inline text sources, the model by ARN.
type RerankRequest struct {
	Queries                []RerankQuery          `json:"queries"`
	Sources                []RerankSource         `json:"sources"`
	RerankingConfiguration RerankingConfiguration `json:"rerankingConfiguration"`
	NextToken              string                 `json:"nextToken,omitempty"`
}

// RerankQuery is a query: Type "TEXT" and its text.
type RerankQuery struct {
	Type      string       `json:"type"`
	TextQuery TextDocument `json:"textQuery"`
}

// TextDocument is a text.
type TextDocument struct {
	Text string `json:"text"`
}

// RerankSource is a source: Type "INLINE" and its document.
type RerankSource struct {
	Type                 string         `json:"type"`
	InlineDocumentSource RerankDocument `json:"inlineDocumentSource"`
}

// RerankDocument is a document: Type "TEXT" with TextDocument, or "JSON" with
// JSONDocument.
type RerankDocument struct {
	Type         string          `json:"type"`
	TextDocument *TextDocument   `json:"textDocument,omitempty"`
	JSONDocument json.RawMessage `json:"jsonDocument,omitempty"`
}

// RerankingConfiguration is Type "BEDROCK_RERANKING_MODEL" and its configuration.
type RerankingConfiguration struct {
	Type                          string                        `json:"type"`
	BedrockRerankingConfiguration BedrockRerankingConfiguration `json:"bedrockRerankingConfiguration"`
}

// BedrockRerankingConfiguration is the model and how many results to return (1 to 1000).
type BedrockRerankingConfiguration struct {
	NumberOfResults    int                `json:"numberOfResults,omitempty"`
	ModelConfiguration ModelConfiguration `json:"modelConfiguration"`
}

// ModelConfiguration is the model's ARN and the model's own request fields.
type ModelConfiguration struct {
	ModelARN                     string                     `json:"modelArn"`
	AdditionalModelRequestFields map[string]json.RawMessage `json:"additionalModelRequestFields,omitempty"`
}

// RerankResponse is the Rerank answer: results, best first, and a token when more remain.
type RerankResponse struct {
	Results   []RerankResult `json:"results"`
	NextToken string         `json:"nextToken,omitempty"`
}

// RerankResult is a ranked source: its index in the request's sources, its score.
type RerankResult struct {
	Index          int             `json:"index"`
	RelevanceScore float64         `json:"relevanceScore"`
	Document       *RerankDocument `json:"document,omitempty"`
}
