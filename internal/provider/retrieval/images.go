package retrieval

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Image is what a translation reads of the client's OpenAI image generation body, for an
// API that generates images in its own wire (Bedrock's InvokeModel, Vertex AI's Imagen):
// the prompt, how many, and the size. The clouds answer the images' bytes, never a link: a
// body that asks for response_format url is refused (ReadImage).
type Image struct {
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
	// Width and Height are Size's, 0 when the client left it out or sent "auto".
	Width, Height int `json:"-"`
}

// ReadImage reads body, an image generation body the client wire checked. A size that is
// not WIDTHxHEIGHT (or "auto"), or response_format url, is an error: who, the provider's
// name in it, answers base64 images only.
func ReadImage(body []byte, who string) (*Image, error) {
	var m Image
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if m.ResponseFormat == "url" {
		return nil, errors.New("response_format url is not served: " + who + " answers the images' bytes (leave response_format out, or send b64_json)")
	}
	if m.Size != "" && m.Size != "auto" {
		w, h, ok := strings.Cut(m.Size, "x")
		m.Width, _ = strconv.Atoi(w)
		m.Height, _ = strconv.Atoi(h)
		if !ok || m.Width <= 0 || m.Height <= 0 {
			return nil, errors.New("size must be WIDTHxHEIGHT (1024x1024, ...) or auto")
		}
	}
	return &m, nil
}

// Count is the images asked for: n, 1 when unset.
func (m *Image) Count() int {
	if m.N == nil {
		return 1
	}
	return *m.N
}

// Images is the OpenAI answer of images, base64 encoded, in order. None is an error.
func Images(b64 []string) ([]byte, error) {
	if len(b64) == 0 {
		return nil, errors.New("no images")
	}
	type datum struct {
		B64JSON string `json:"b64_json"`
	}
	a := struct {
		Created int64   `json:"created"`
		Data    []datum `json:"data"`
	}{Created: time.Now().Unix(), Data: make([]datum, len(b64))}
	for i, b := range b64 {
		if b == "" {
			return nil, errors.New("image " + strconv.Itoa(i) + " is empty")
		}
		a.Data[i].B64JSON = b
	}
	return json.Marshal(a)
}
