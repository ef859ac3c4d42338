package bedrock

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/bedrock"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// maxPages bounds the pages of one Rerank call the adapter follows (nextToken).
const maxPages = 10

// Plain serves the gateway's plain endpoints (issue 48): rerank with the Rerank API of the
// Agents for Amazon Bedrock Runtime (rerank), embeddings and image generation with
// InvokeModel of the embedding and image models (embed, image). The calls are signed as a chat call is (SigV4, or the API key). Another
// path is Invalid (404); a non-2xx answer is mapped as for a chat call; a 2xx answer that is
// not the API's is Unavailable, so the chain falls back.
func (c *Client) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	switch path {
	case "embeddings":
		return c.embed(ctx, model, body)
	case "images/generations":
		return c.image(ctx, path, model, body)
	}
	return c.rerank(ctx, path, model, body)
}

// rerank ranks with the Rerank API (POST /rerank), which serves Bedrock's rerankers
// (amazon.rerank-v1:0, cohere.rerank-v3-5:0) in one shape: body is the client's, in the
// Cohere/Jina shape, model the target's model id (or ARN). Its answer, every page of it,
// becomes the client's shape, with the search units Bedrock bills (one per 100 documents).
func (c *Client) rerank(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	r, texts, err := retrieval.RerankCall(c.name, path, body)
	if err != nil {
		return nil, err
	}
	req := rerankRequest(c.modelARN(model), r, texts)
	var results []rerank.Result
	for page := 1; ; page++ {
		b, err := json.Marshal(req)
		if err != nil {
			return nil, retrieval.Refused(c.name, path, err)
		}
		out, err := c.call(ctx, c.agent+"/rerank", b)
		if err != nil {
			return nil, err
		}
		var res wire.RerankResponse
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
		}
		for _, x := range res.Results {
			results = append(results, rerank.Result{Index: x.Index, RelevanceScore: x.RelevanceScore})
		}
		if res.NextToken == "" || page == maxPages || len(results) >= req.RerankingConfiguration.BedrockRerankingConfiguration.NumberOfResults {
			break
		}
		req.NextToken = res.NextToken
	}
	ans, err := retrieval.Scored(model, results, r, texts)
	if err != nil {
		return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
	}
	return ans, nil
}

// rerankRequest is the Rerank body of r: its query, its documents' texts as inline text
// sources, top_n results (all the documents when unset), and Cohere's max_tokens_per_doc
// as the model's own field.
func rerankRequest(arn string, r *rerank.Request, texts []string) *wire.RerankRequest {
	n := len(texts)
	if r.TopN != nil && *r.TopN < n {
		n = *r.TopN
	}
	req := &wire.RerankRequest{
		Queries: []wire.RerankQuery{{Type: "TEXT", TextQuery: wire.TextDocument{Text: r.Query}}},
		Sources: make([]wire.RerankSource, len(texts)),
		RerankingConfiguration: wire.RerankingConfiguration{Type: "BEDROCK_RERANKING_MODEL",
			BedrockRerankingConfiguration: wire.BedrockRerankingConfiguration{NumberOfResults: n,
				ModelConfiguration: wire.ModelConfiguration{ModelARN: arn}}},
	}
	for i, t := range texts {
		req.Sources[i] = wire.RerankSource{Type: "INLINE",
			InlineDocumentSource: wire.RerankDocument{Type: "TEXT", TextDocument: &wire.TextDocument{Text: t}}}
	}
	if r.MaxTokensPerDoc != nil {
		v, _ := json.Marshal(*r.MaxTokensPerDoc)
		req.RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.AdditionalModelRequestFields =
			map[string]json.RawMessage{"max_tokens_per_doc": v}
	}
	return req
}

// modelARN is the foundation model ARN the Rerank API takes for model, an id
// (cohere.rerank-v3-5:0) in the provider's region and partition; an ARN stays as it is.
func (c *Client) modelARN(model string) string {
	if strings.HasPrefix(model, "arn:") {
		return model
	}
	partition := "aws"
	switch {
	case strings.HasPrefix(c.region, "cn-"):
		partition = "aws-cn"
	case strings.HasPrefix(c.region, "us-gov-"):
		partition = "aws-us-gov"
	}
	return "arn:" + partition + ":bedrock:" + c.region + "::foundation-model/" + model
}

// call POSTs body, a JSON document, to u, signed (authorize), and returns the whole 2xx
// answer; another status is mapped and scrubbed (statusError).
func (c *Client) call(ctx context.Context, u string, body []byte) ([]byte, error) {
	return c.plain.Post(ctx, u, body, retrieval.MaxAnswer, func(hr *http.Request) (func(*transport.Answer) error, error) {
		o, err := c.authorize(ctx, hr, body)
		return func(a *transport.Answer) error { return o.statusError(a.Status, a.Header, a.Body) }, err
	})
}
