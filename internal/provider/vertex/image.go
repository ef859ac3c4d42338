package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// The Imagen models of Vertex AI (imagen-3.0-generate-002, imagen-4.0-generate-001, ...)
// serve the gateway's image generation with their predict method: POST
// {root}/publishers/google/models/{model}:predict, the same token as the model calls. Shape:
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api. The
// capability models (imagen-3.0-capability-001) serve its edits with the same method, in the
// edit shape: a raw reference image, a mask reference image (white where to edit) and
// editMode EDIT_MODE_INPAINT_INSERTION:
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api-edit.

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
	return c.predictImages(ctx, path, model, b)
}

// editRequest is the predict body of an Imagen edit.
type editRequest struct {
	Instances  []editInstance `json:"instances"`
	Parameters editParams     `json:"parameters"`
}

type editInstance struct {
	Prompt          string           `json:"prompt"`
	ReferenceImages []referenceImage `json:"referenceImages"`
}

// referenceImage is the image to edit (REFERENCE_TYPE_RAW) or its mask (REFERENCE_TYPE_MASK,
// with its maskImageConfig).
type referenceImage struct {
	ReferenceType   string      `json:"referenceType"`
	ReferenceID     int         `json:"referenceId"`
	ReferenceImage  imageBytes  `json:"referenceImage"`
	MaskImageConfig *maskConfig `json:"maskImageConfig,omitempty"`
}

type imageBytes struct {
	Bytes string `json:"bytesBase64Encoded"`
}

type maskConfig struct {
	MaskMode string `json:"maskMode"`
}

type editParams struct {
	EditMode    string `json:"editMode"`
	SampleCount int    `json:"sampleCount"`
}

// Pass serves the gateway's image edits (images/edits, issue 48) with an Imagen capability
// model's predict: the client's image and prompt, and OpenAI's mask (its transparent
// pixels) as Imagen's (white where to edit), inserted by inpainting; the answer is OpenAI's
// list of base64 images, whole. Another path is Invalid (404); a bad edit, or a model that
// does not edit, is the client's 400, before any call.
func (c *Client) Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error) {
	if path != "images/edits" {
		return nil, retrieval.NotServed(c.name, path)
	}
	var err error
	var e *retrieval.Edit
	if !strings.Contains(model, "capability") {
		err = errors.New("Imagen edits images with its capability models (imagen-3.0-capability-001), not " + model)
	} else {
		e, err = retrieval.ReadEdit(req, "Vertex AI")
	}
	if err != nil {
		return nil, retrieval.Refused(c.name, path, err)
	}
	b, _ := json.Marshal(editRequest{Instances: []editInstance{{Prompt: e.Prompt, ReferenceImages: []referenceImage{
		{ReferenceType: "REFERENCE_TYPE_RAW", ReferenceID: 1, ReferenceImage: imageBytes{e.Base64()}},
		{ReferenceType: "REFERENCE_TYPE_MASK", ReferenceID: 2, ReferenceImage: imageBytes{e.Mask(255)},
			MaskImageConfig: &maskConfig{MaskMode: "MASK_MODE_USER_PROVIDED"}}}}},
		Parameters: editParams{EditMode: "EDIT_MODE_INPAINT_INSERTION", SampleCount: e.Count()}}) // strings and ints
	ans, err := c.predictImages(ctx, path, model, b)
	if err != nil {
		return nil, err
	}
	return retrieval.Answered(ans), nil
}

// predictImages calls model's predict with b, and answers the images of its predictions as
// OpenAI's list of base64 images (b64_json): those the safety filter let through, none at
// all being Unavailable.
func (c *Client) predictImages(ctx context.Context, path, model string, b []byte) ([]byte, error) {
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
