package bedrock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// Bedrock's image models (Amazon Titan Image Generator v2, Amazon Nova Canvas) serve the
// gateway's image generation through InvokeModel (POST /model/{id}/invoke) with the
// TEXT_IMAGE task, and its edits (/v1/images/edits) with the INPAINTING task. Shape:
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-image.html and
// https://docs.aws.amazon.com/nova/latest/userguide/image-gen-req-resp-structure.html.

// imageBody is a TEXT_IMAGE request.
type imageBody struct {
	TaskType          string      `json:"taskType"`
	TextToImageParams textToImage `json:"textToImageParams"`
	Config            imageConfig `json:"imageGenerationConfig"`
}

// textToImage is the prompt.
type textToImage struct {
	Text string `json:"text"`
}

// imageConfig is how many images, and their size (the model's default when left out).
type imageConfig struct {
	NumberOfImages int `json:"numberOfImages"`
	Width          int `json:"width,omitempty"`
	Height         int `json:"height,omitempty"`
}

// inpaintBody is an INPAINTING request: the image, opaque, and the mask image, black where
// the image is to be edited, white elsewhere.
type inpaintBody struct {
	TaskType string        `json:"taskType"`
	Params   inpaintParams `json:"inPaintingParams"`
	Config   imageConfig   `json:"imageGenerationConfig"`
}

type inpaintParams struct {
	Image     string `json:"image"`
	Text      string `json:"text,omitempty"`
	MaskImage string `json:"maskImage"`
}

// imageModel refuses a model that is not one of Bedrock's image models.
func imageModel(model string) error {
	if !strings.Contains(model, "titan-image-generator") && !strings.Contains(model, "nova-canvas") {
		return errors.New("the model is not one of Bedrock's Titan Image Generator or Nova Canvas models (amazon.nova-canvas-v1:0, amazon.titan-image-generator-v2:0)")
	}
	return nil
}

// image generates the images of body, the client's OpenAI image generation body, with
// model in one call, and answers OpenAI's list of base64 images (b64_json).
func (c *Client) image(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	m, err := retrieval.ReadImage(body, "Bedrock")
	if err == nil {
		err = imageModel(model)
	}
	if err != nil {
		return nil, retrieval.Refused(c.name, path, err)
	}
	b, _ := json.Marshal(imageBody{TaskType: "TEXT_IMAGE", TextToImageParams: textToImage{Text: m.Prompt},
		Config: imageConfig{NumberOfImages: m.Count(), Width: m.Width, Height: m.Height}}) // strings and ints
	return c.invokeImages(ctx, path, model, b)
}

// Pass serves the gateway's image edits (images/edits, issue 48) with the INPAINTING task:
// the client's image and prompt, and OpenAI's mask (its transparent pixels) as Bedrock's
// (black where to edit); the answer is OpenAI's list of base64 images, whole. Another path
// is Invalid (404); a bad edit is the client's 400, before any call.
func (c *Client) Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error) {
	if path != "images/edits" {
		return nil, retrieval.NotServed(c.name, path)
	}
	err := imageModel(model)
	var e *retrieval.Edit
	if err == nil {
		e, err = retrieval.ReadEdit(req, "Bedrock")
	}
	if err != nil {
		return nil, retrieval.Refused(c.name, path, err)
	}
	b, _ := json.Marshal(inpaintBody{TaskType: "INPAINTING", Params: inpaintParams{Image: e.Base64(), Text: e.Prompt, MaskImage: e.Mask(0)},
		Config: imageConfig{NumberOfImages: e.Count()}}) // strings and ints
	ans, err := c.invokeImages(ctx, path, model, b)
	if err != nil {
		return nil, err
	}
	return retrieval.Answered(ans), nil
}

// invokeImages calls InvokeModel of model with b, a task's body, and answers its images as
// OpenAI's list of base64 images (b64_json).
func (c *Client) invokeImages(ctx context.Context, path, model string, b []byte) ([]byte, error) {
	out, err := c.call(ctx, c.base+"/model/"+escapeLabel(model)+"/invoke", b)
	if err != nil {
		return nil, err
	}
	var a struct {
		Images []string `json:"images"`
		Error  string   `json:"error"`
	}
	err = json.Unmarshal(out, &a)
	if err == nil && a.Error != "" {
		err = errors.New(a.Error)
	}
	ans, ierr := retrieval.Images(a.Images)
	if err = cmp.Or(err, ierr); err != nil {
		return nil, c.scrub.Error(retrieval.Malformed(c.name, path, err))
	}
	return ans, nil
}
