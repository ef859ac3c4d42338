package vertex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// The embedding models of Vertex AI (text-embedding-005, text-multilingual-embedding-002,
// gemini-embedding-001) serve the gateway's embeddings with their predict method: POST
// {root}/publishers/google/models/{model}:predict, the same token as the model calls. Shape:
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api.

// maxInstances is the most texts one predict call takes; gemini-embedding-001 takes one.
const maxInstances = 250

// predictRequest is the predict body of the text embedding models.
type predictRequest struct {
	Instances  []instance         `json:"instances"`
	Parameters *predictParameters `json:"parameters,omitempty"`
}

// instance is one text, with the task it is embedded for (RETRIEVAL_DOCUMENT, ...).
type instance struct {
	Content  string `json:"content"`
	TaskType string `json:"task_type,omitempty"`
}

// predictParameters are the call's parameters: the vector's length.
type predictParameters struct {
	OutputDimensionality *int `json:"outputDimensionality,omitempty"`
}

// predictAnswer is the predict answer: a vector per instance and the tokens it read.
type predictAnswer struct {
	Predictions []struct {
		Embeddings struct {
			Values     []float32 `json:"values"`
			Statistics struct {
				TokenCount float64 `json:"token_count"`
			} `json:"statistics"`
		} `json:"embeddings"`
	} `json:"predictions"`
}

// taskTypes are the Cohere input types a client may send (input_type, an extra member of
// the OpenAI body) as Vertex AI's task types; another input_type is sent upper-cased
// (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY, ...).
var taskTypes = map[string]string{"search_document": "RETRIEVAL_DOCUMENT", "search_query": "RETRIEVAL_QUERY",
	"classification": "CLASSIFICATION", "clustering": "CLUSTERING"}

// embed embeds the texts of body, the client's OpenAI embeddings body, with model, in calls
// of at most maxInstances texts (one for the gemini embedding models), and answers OpenAI's
// list with the tokens read as usage.
func (c *Client) embed(ctx context.Context, model string, body []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Vertex AI")
	if err != nil {
		return nil, retrieval.Refused(c.name, "embeddings", err)
	}
	task := e.InputType
	if t, ok := taskTypes[task]; ok {
		task = t
	}
	per := maxInstances
	if strings.HasPrefix(model, "gemini-embedding") {
		per = 1
	}
	var params *predictParameters
	if e.Dimensions != nil {
		params = &predictParameters{OutputDimensionality: e.Dimensions}
	}
	vectors, tokens := make([][]float32, 0, len(e.Texts)), 0
	for start := 0; start < len(e.Texts); start += per {
		req := predictRequest{Parameters: params}
		for _, t := range e.Texts[start:min(start+per, len(e.Texts))] {
			req.Instances = append(req.Instances, instance{Content: t, TaskType: strings.ToUpper(task)})
		}
		b, err := json.Marshal(req)
		if err != nil {
			return nil, retrieval.Refused(c.name, "embeddings", err)
		}
		out, err := c.google.Post(ctx, c.root+"/models/"+url.PathEscape(model)+":predict", b, retrieval.MaxAnswer)
		if err != nil {
			return nil, err
		}
		vs, n, err := predicted(out, len(req.Instances))
		if err != nil {
			return nil, c.scrub.Error(retrieval.Malformed(c.name, "embeddings", err))
		}
		vectors, tokens = append(vectors, vs...), tokens+n
	}
	return e.List(model, vectors, tokens)
}

// predicted reads a predict answer for n texts: a vector for each, and the tokens read.
func predicted(out []byte, n int) ([][]float32, int, error) {
	var a predictAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, 0, err
	}
	if len(a.Predictions) != n {
		return nil, 0, fmt.Errorf("%d predictions for %d texts", len(a.Predictions), n)
	}
	vectors, tokens := make([][]float32, n), 0
	for i, p := range a.Predictions {
		if len(p.Embeddings.Values) == 0 {
			return nil, 0, fmt.Errorf("prediction %d has no values", i)
		}
		vectors[i] = p.Embeddings.Values
		tokens += int(p.Embeddings.Statistics.TokenCount)
	}
	return vectors, tokens, nil
}
