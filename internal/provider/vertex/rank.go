package vertex

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// The ranking API of Vertex AI (Discovery Engine's RankService), which serves the gateway's
// rerank: POST {root}/v1/projects/{project}/locations/global/rankingConfigs/
// default_ranking_config:rank with the same OAuth token as the model calls. Shape:
// https://cloud.google.com/generative-ai-app-builder/docs/reference/rest/v1/projects.locations.rankingConfigs/rank.

// rankRoot is the ranking API's endpoint when the provider's is not overridden.
const rankRoot = "https://discoveryengine.googleapis.com"

// maxRecords is the most records one rank call takes: a longer request is ranked in parts,
// whose scores (each record's relevance to the query) are comparable.
const maxRecords = 200

// rankRequest is the rank body. Records are the documents, each with its index as its id.
type rankRequest struct {
	Model                         string       `json:"model,omitempty"`
	Query                         string       `json:"query"`
	Records                       []rankRecord `json:"records"`
	TopN                          int          `json:"topN,omitempty"`
	IgnoreRecordDetailsInResponse bool         `json:"ignoreRecordDetailsInResponse"`
}

// rankRecord is a RankingRecord: the request's id and content, the answer's id and score.
type rankRecord struct {
	ID      string   `json:"id"`
	Content string   `json:"content,omitempty"`
	Score   *float64 `json:"score,omitempty"`
}

// rankURL is the rank method's URL of the provider: on root, the overridden endpoint (a
// proxy or a test that serves the model calls too) or rankRoot.
func rankURL(root, project string) string {
	return strings.TrimRight(root, "/") + "/v1/projects/" + url.PathEscape(project) +
		"/locations/global/rankingConfigs/default_ranking_config:rank"
}

// Plain serves the gateway's plain endpoints (issue 48): rerank with the ranking API (rank),
// embeddings and image generation with the embedding and Imagen models' predict method
// (embed, image). Another path is Invalid
// (404); a non-2xx answer is mapped as for a chat call; a 2xx answer that is not the API's
// is Unavailable, so the chain falls back.
func (c *Client) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	switch path {
	case "embeddings":
		return c.embed(ctx, model, body)
	case "images/generations":
		return c.image(ctx, path, model, body)
	}
	return c.rank(ctx, path, model, body)
}

// rank ranks with the ranking API: body is the client's, in the Cohere/Jina shape, model
// the ranking model (semantic-ranker-default@latest, semantic-ranker-fast-004, ...).
// Documents are records with their index as id, 200 a call; the answer is the client's
// shape, best first, with the search units Google bills (one per 100 records).
func (c *Client) rank(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	r, texts, err := retrieval.RerankCall(c.name, path, body)
	if err != nil {
		return nil, err
	}
	var results []rerank.Result
	for start := 0; start < len(texts); start += maxRecords {
		part := texts[start:min(start+maxRecords, len(texts))]
		req := rankRequest{Model: model, Query: r.Query, Records: make([]rankRecord, len(part)), IgnoreRecordDetailsInResponse: true}
		for i, t := range part {
			req.Records[i] = rankRecord{ID: strconv.Itoa(start + i), Content: t}
		}
		if r.TopN != nil && len(texts) <= maxRecords {
			req.TopN = *r.TopN
		}
		b, err := json.Marshal(req)
		if err != nil {
			return nil, retrieval.Refused(c.name, path, err)
		}
		out, err := c.google.Post(ctx, rankURL(c.rankRoot, c.project), b, retrieval.MaxAnswer)
		if err != nil {
			return nil, err
		}
		got, err := ranked(out)
		if err != nil {
			return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
		}
		results = append(results, got...)
	}
	slices.SortStableFunc(results, func(a, b rerank.Result) int { return cmp.Compare(b.RelevanceScore, a.RelevanceScore) })
	if r.TopN != nil && *r.TopN < len(results) {
		results = results[:*r.TopN]
	}
	ans, err := retrieval.Scored(model, results, r, texts)
	if err != nil {
		return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
	}
	return ans, nil
}

// ranked reads a rank answer's records as results: each id an index, each with a score.
func ranked(out []byte) ([]rerank.Result, error) {
	var a struct {
		Records []rankRecord `json:"records"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, err
	}
	if a.Records == nil {
		return nil, errors.New("no records")
	}
	res := make([]rerank.Result, len(a.Records))
	for i, rec := range a.Records {
		n, err := strconv.Atoi(rec.ID)
		if err != nil || rec.Score == nil {
			return nil, fmt.Errorf("record %d has no index as its id or no score", i)
		}
		res[i] = rerank.Result{Index: n, RelevanceScore: *rec.Score}
	}
	return res, nil
}
