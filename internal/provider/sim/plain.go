package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The plain endpoints a simulated provider answers itself (issue 48), so that `make run`
// serves them with no key; embeddings are its adapter's, through the mock.
//
//   - moderations: one result per input; an input whose text holds "kill" (any case) is
//     flagged for violence (score 0.92), everything else passes (scores 0.01).
//   - images/generations: n (default 1) copies of an 8x8 PNG, as b64_json, or as a data:
//     URL when response_format is url; usage counts them (Units).
//   - rerank: each document scores the share of the query's words it holds (0 to 1, ties in
//     the documents' order), the best first, top_n of them; one search unit per 100
//     documents (Cohere's meta.billed_units) and the words as tokens (Jina's usage).
func (p chat) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	return simulated(ctx, p.Client, path, model, body)
}

func (p responses) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	return simulated(ctx, p.Responses, path, model, body)
}

type poster interface {
	Plain(ctx context.Context, path, model string, body []byte) ([]byte, error)
}

func simulated(ctx context.Context, up poster, path, model string, body []byte) ([]byte, error) {
	var out any
	var err error
	switch path {
	case "moderations":
		out, err = moderate(model, body)
	case "images/generations":
		out, err = generate(body)
	case "rerank":
		out, err = rank(model, body)
	default:
		return up.Plain(ctx, path, model, body)
	}
	if err != nil {
		return nil, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "sim: " + err.Error()}
	}
	return json.Marshal(out)
}

var categories = []string{"harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
	"self-harm", "self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic"}

func moderate(model string, body []byte) (any, error) {
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var texts []string
	var one string
	var parts []struct{ Text string }
	switch {
	case json.Unmarshal(req.Input, &one) == nil:
		texts = []string{one}
	case json.Unmarshal(req.Input, &texts) == nil:
	case json.Unmarshal(req.Input, &parts) == nil:
		var all []string // the parts of one input are judged together
		for _, p := range parts {
			all = append(all, p.Text)
		}
		texts = []string{strings.Join(all, " ")}
	default:
		return nil, fmt.Errorf("input is not a string, strings or parts")
	}
	type result struct {
		Flagged    bool               `json:"flagged"`
		Categories map[string]bool    `json:"categories"`
		Scores     map[string]float64 `json:"category_scores"`
	}
	results := make([]result, len(texts))
	for i, t := range texts {
		r := result{Categories: map[string]bool{}, Scores: map[string]float64{}}
		for _, c := range categories {
			r.Categories[c], r.Scores[c] = false, 0.01
		}
		if strings.Contains(strings.ToLower(t), "kill") {
			r.Flagged, r.Categories["violence"], r.Scores["violence"] = true, true, 0.92
		}
		results[i] = r
	}
	return map[string]any{"id": fmt.Sprintf("modr-sim-%x", digest(body)), "model": model, "results": results}, nil
}

// pngImage is the simulated image: 8x8 pixels of one blue.
var pngImage = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 64 {
		img.Set(i%8, i/8, color.RGBA{R: 0x1e, G: 0x6f, B: 0xd9, A: 0xff})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

func generate(body []byte) (any, error) {
	var req struct {
		Prompt         string `json:"prompt"`
		N              *int   `json:"n"`
		ResponseFormat string `json:"response_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	b64 := base64.StdEncoding.EncodeToString(pngImage)
	data := make([]map[string]string, max(n, 0))
	for i := range data {
		data[i] = map[string]string{"b64_json": b64, "revised_prompt": req.Prompt}
		if req.ResponseFormat == "url" {
			data[i] = map[string]string{"url": "data:image/png;base64," + b64, "revised_prompt": req.Prompt}
		}
	}
	return map[string]any{"created": 1767225600, "data": data}, nil
}

func rank(model string, body []byte) (any, error) {
	var req struct {
		Query     string            `json:"query"`
		Documents []json.RawMessage `json:"documents"`
		TopN      *int              `json:"top_n"`
		Return    bool              `json:"return_documents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(req.Query))
	type result struct {
		Index    int               `json:"index"`
		Score    float64           `json:"relevance_score"`
		Document map[string]string `json:"document,omitempty"`
	}
	results := make([]result, len(req.Documents))
	tokens := len(words)
	for i, raw := range req.Documents {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var o struct{ Text string }
			_ = json.Unmarshal(raw, &o)
			text = o.Text
		}
		doc := strings.Fields(strings.ToLower(text))
		tokens += len(doc)
		hits := 0
		for _, w := range words {
			if slices.Contains(doc, w) {
				hits++
			}
		}
		results[i] = result{Index: i}
		if len(words) > 0 {
			results[i].Score = float64(hits) / float64(len(words))
		}
		if req.Return {
			results[i].Document = map[string]string{"text": text}
		}
	}
	slices.SortStableFunc(results, func(a, b result) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if req.TopN != nil && *req.TopN >= 0 && *req.TopN < len(results) {
		results = results[:*req.TopN]
	}
	return map[string]any{"id": fmt.Sprintf("rerank-sim-%x", digest(body)), "model": model, "results": results,
		"meta":  map[string]any{"billed_units": map[string]int{"search_units": (len(req.Documents) + 99) / 100}},
		"usage": map[string]int{"total_tokens": tokens}}, nil
}

func digest(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
