package bedrock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// Bedrock's image models (Amazon Titan Image Generator v2, Amazon Nova Canvas) serve the
// gateway's image generation through InvokeModel (POST /model/{id}/invoke) with the
// TEXT_IMAGE task. Shape:
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

// image generates the images of body, the client's OpenAI image generation body, with
// model in one call, and answers OpenAI's list of base64 images (b64_json).
func (c *Client) image(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	m, err := retrieval.ReadImage(body, "Bedrock")
	if err != nil {
		return nil, retrieval.Refused(c.name, path, err)
	}
	if !strings.Contains(model, "titan-image-generator") && !strings.Contains(model, "nova-canvas") {
		return nil, retrieval.Refused(c.name, path, errors.New("the model is not one of Bedrock's Titan Image Generator or Nova Canvas models (amazon.nova-canvas-v1:0, amazon.titan-image-generator-v2:0)"))
	}
	b, _ := json.Marshal(imageBody{TaskType: "TEXT_IMAGE", TextToImageParams: textToImage{Text: m.Prompt},
		Config: imageConfig{NumberOfImages: m.Count(), Width: m.Width, Height: m.Height}}) // strings and ints
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
