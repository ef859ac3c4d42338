package vertex

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// The Imagen models of Vertex AI (imagen-3.0-generate-002, imagen-4.0-generate-001, ...)
// serve the gateway's image generation with their predict method: POST
// {root}/publishers/google/models/{model}:predict, the same token as the model calls. Shape:
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api.

// imagenRequest is the predict body of the Imagen models.
type imagenRequest struct {
	Instances  []imagenPrompt `json:"instances"`
	Parameters imagenParams   `json:"parameters"`
}

// imagenPrompt is the one instance: the prompt.
type imagenPrompt struct {
	Prompt string `json:"prompt"`
}

// imagenParams are how many images, and their aspect ratio (the model's 1:1 when unset).
type imagenParams struct {
	SampleCount int    `json:"sampleCount"`
	AspectRatio string `json:"aspectRatio,omitempty"`
}

// aspectRatios are the ratios Imagen generates, width over height.
var aspectRatios = map[string]float64{"1:1": 1, "3:4": 3.0 / 4, "4:3": 4.0 / 3, "9:16": 9.0 / 16, "16:9": 16.0 / 9}

// aspectRatio is the ratio of Imagen nearest w by h, within 5% (OpenAI's 1792x1024 is
// 16:9); "" for none near.
func aspectRatio(w, h int) string {
	best, off := "", 0.05
	for name, r := range aspectRatios {
		if d := math.Abs(math.Log(float64(w) / float64(h) / r)); d < off {
			best, off = name, d
		}
	}
	return best
}

// image generates the images of body, the client's OpenAI image generation body, with
// model in one predict call, its size as the nearest aspect ratio Imagen generates, and
// answers OpenAI's list of base64 images (b64_json): those the safety filter let through,
// none at all being Unavailable.
func (c *Client) image(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	m, err := retrieval.ReadImage(body, "Vertex AI")
	if err != nil {
		return nil, retrieval.Refused(c.name, path, err)
	}
	req := imagenRequest{Instances: []imagenPrompt{{Prompt: m.Prompt}}, Parameters: imagenParams{SampleCount: m.Count()}}
	if m.Width > 0 {
		if req.Parameters.AspectRatio = aspectRatio(m.Width, m.Height); req.Parameters.AspectRatio == "" {
			return nil, retrieval.Refused(c.name, path, fmt.Errorf("Imagen generates the aspect ratios 1:1, 3:4, 4:3, 9:16 and 16:9, not %s", m.Size))
		}
	}
	b, _ := json.Marshal(req) // strings and ints
	out, err := c.google.Post(ctx, c.root+"/models/"+url.PathEscape(model)+":predict", b, retrieval.MaxAnswer)
	if err != nil {
		return nil, err
	}
	var a struct {
		Predictions []struct {
			Bytes string `json:"bytesBase64Encoded"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
	}
	var b64 []string
	for _, p := range a.Predictions {
		if p.Bytes != "" { // an image the safety filter held back has none (raiFilteredReason)
			b64 = append(b64, p.Bytes)
		}
	}
	ans, err := retrieval.Images(b64)
	if err != nil {
		return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
	}
	return ans, nil
}
