package images

import (
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/dialect/upload"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Edits is the image edit wire (POST /v1/images/edits, multipart: issue 48), served by the
// images aliases (the configuration's images: section) or a direct target of a provider
// that serves images. Its images are spooled as they arrive (package upload), its answer
// passed through; it bills the images of the answer, like a generation.
var Edits = embeddings.Media("images", "/v1/images/edits", "images/edits", decodeEdit, true)

// edit is an image edit's form: one image (dall-e-2) or several (gpt-image-1, as image[]
// or repeated), an optional mask, and a prompt.
var edit = upload.Form{
	Files:    []string{"image", "image[]", "mask"},
	Required: []string{"image", "prompt"},
	Model:    DefaultModel,
	Field: func(name, v string) error {
		switch name {
		case "prompt":
			if v == "" || len([]rune(v)) > 32000 {
				return oai.Invalid(name, "Invalid 'prompt': expected a string of 1 to 32000 characters.")
			}
		case "n":
			return formInt(name, v, 1, 10)
		case "output_compression":
			return formInt(name, v, 0, 100)
		case "response_format":
			if v != "url" && v != "b64_json" {
				return oai.Invalid(name, "Invalid value for 'response_format'. Supported values are: 'url' and 'b64_json'.")
			}
		case "stream", "partial_images":
			if v != "false" && v != "0" {
				return oai.Invalid(name, "Streamed image edits are not served by the gateway: leave out '%s'.", name)
			}
		}
		return nil
	},
}

// formInt checks a multipart field that holds an integer in [lo, hi].
func formInt(name, v string, lo, hi int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return oai.TypeErr(name, "an integer")
	}
	if n < lo || n > hi {
		return oai.Invalid(name, "Invalid '%s': %d is out of range [%d, %d].", name, n, lo, hi)
	}
	return nil
}

func decodeEdit(_ []byte, in dialect.Input) (*dialect.Decoded, error) {
	model, req, err := upload.Read(in, edit)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, f := range req.Extra {
		if f.Name == "n" {
			n, _ = strconv.Atoi(string(f.Value[1 : len(f.Value)-1])) // checked: digits, quoted
		}
	}
	return &dialect.Decoded{Model: model, Req: req, Bill: func(answer []byte) (llm.Usage, bool) {
		if u, ok := Usage(answer); ok && answer != nil {
			return u, true
		}
		return llm.Usage{Units: n}, true // the answer was too large to keep: the images asked
	}}, nil
}
