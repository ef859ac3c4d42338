package bedrock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/sluice-gw/sluice/internal/provider/cohere"
	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// The embedding models of Bedrock serve the gateway's embeddings through InvokeModel (POST
// /model/{id}/invoke), each in its vendor's body. Shapes:
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html and
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html.

// errNoEmbedding is an answer without a vector for each text.
var errNoEmbedding = errors.New("not one float embedding per text")

// maxCohereTexts is the most texts one Cohere embed call on Bedrock takes.
const maxCohereTexts = 96

// titanBody is a Titan text embedding request: one text; dimensions (v2) as the client's.
type titanBody struct {
	InputText  string `json:"inputText"`
	Dimensions *int   `json:"dimensions,omitempty"`
}

// titanAnswer is a Titan text embedding answer.
type titanAnswer struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

// embed embeds the texts of body, the client's OpenAI embeddings body, with model: a Titan
// model one text a call, a Cohere model 96 texts a call; the answer is OpenAI's list, with
// the tokens Titan reports as usage (Cohere on Bedrock reports none in its body).
func (c *Client) embed(ctx context.Context, model string, body []byte) ([]byte, error) {
	e, err := retrieval.ReadEmbed(body, "Bedrock")
	if err != nil {
		return nil, retrieval.Refused(c.name, "embeddings", err)
	}
	u := c.base + "/model/" + escapeLabel(model) + "/invoke"
	vectors, tokens := make([][]float32, 0, len(e.Texts)), 0
	switch {
	case strings.Contains(model, "titan-embed"):
		for _, t := range e.Texts {
			b, _ := json.Marshal(titanBody{InputText: t, Dimensions: e.Dimensions}) // strings and an int
			out, err := c.call(ctx, u, b)
			if err != nil {
				return nil, err
			}
			var a titanAnswer
			if err := json.Unmarshal(out, &a); err != nil || len(a.Embedding) == 0 {
				return nil, c.scrub.Error(retrieval.Malformed(c.name, "embeddings", cmp.Or(err, errNoEmbedding)))
			}
			vectors, tokens = append(vectors, a.Embedding), tokens+a.InputTextTokenCount
		}
	case strings.Contains(model, "cohere.embed"):
		for start := 0; start < len(e.Texts); start += maxCohereTexts {
			b, _ := json.Marshal(cohere.Embedding("", e, e.Texts[start:min(start+maxCohereTexts, len(e.Texts))]))
			out, err := c.call(ctx, u, b)
			if err != nil {
				return nil, err
			}
			var a cohere.EmbedAnswer
			if err := json.Unmarshal(out, &a); err != nil || len(a.Embeddings.Float) != min(maxCohereTexts, len(e.Texts)-start) {
				return nil, c.scrub.Error(retrieval.Malformed(c.name, "embeddings", cmp.Or(err, errNoEmbedding)))
			}
			vectors = append(vectors, a.Embeddings.Float...)
		}
	default:
		return nil, retrieval.Refused(c.name, "embeddings", errors.New("the model is not one of Bedrock's Titan or Cohere embedding models (amazon.titan-embed-text-v2:0, cohere.embed-v4:0, ...)"))
	}
	return e.List(model, vectors, tokens)
}
