package retrieval

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg" // an edit's image may be a JPEG (without a mask: it has no transparency)
	"image/png"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
)

// MaxEditPixels bounds the image of an edit (Nova Canvas's most, 2048x2048): its pixels are
// decoded whole, to make the clouds' mask of OpenAI's.
const MaxEditPixels = 2048 * 2048

// Edit is what a translation reads of the client's OpenAI image edit (multipart: image,
// mask, prompt, n, size), for a cloud that inpaints in its own wire (Bedrock's INPAINTING,
// Vertex AI's Imagen edit): the prompt and n (Image), the image made opaque, as a PNG, and
// the area to edit: OpenAI's is the mask's fully transparent pixels, or the image's own when
// there is no mask.
type Edit struct {
	Image
	// PNG is the image, every pixel opaque (the clouds refuse transparency in it), as a PNG.
	PNG []byte
	// area holds, for each pixel in row order, whether it is to be edited.
	area []bool
	w, h int
}

// ReadEdit reads the edit of req, whose fields and files the client wire checked. One image
// (the clouds edit one), PNG or JPEG of at most MaxEditPixels; a mask of the image's size;
// an area to edit (a transparent pixel); a size that is not the image's own (the clouds
// answer the image's size); and response_format url are errors: who, the provider's name in
// them.
func ReadEdit(req *llm.Request, who string) (*Edit, error) {
	fields := map[string]any{}
	for _, f := range req.Extra {
		var s string
		if json.Unmarshal(f.Value, &s) != nil {
			s = string(f.Value)
		}
		fields[f.Name] = s
	}
	if n, ok := fields["n"].(string); ok {
		var i int
		if _, err := fmt.Sscan(n, &i); err != nil {
			return nil, errors.New("n must be an integer")
		}
		fields["n"] = i
	}
	b, _ := json.Marshal(fields) // strings and an int
	m, err := ReadImage(b, who)
	if err != nil {
		return nil, err
	}
	var img, mask *llm.FilePart
	for i, f := range req.Files {
		switch {
		case f.Field == "mask":
			mask = &req.Files[i]
		case img != nil:
			return nil, errors.New(who + " edits one image: send one image part")
		default:
			img = &req.Files[i]
		}
	}
	if img == nil {
		return nil, errors.New("an image to edit is required")
	}
	pic, err := decode(img.Open(), "image")
	if err != nil {
		return nil, err
	}
	r := pic.Bounds()
	e := &Edit{Image: *m, w: r.Dx(), h: r.Dy()}
	if m.Width > 0 && (m.Width != e.w || m.Height != e.h) {
		return nil, fmt.Errorf("%s answers an edit at the image's size, %dx%d: leave size out, or send auto or %dx%d", who, e.w, e.h, e.w, e.h)
	}
	alpha := pic
	if mask != nil {
		if alpha, err = decode(mask.Open(), "mask"); err != nil {
			return nil, err
		}
		if mr := alpha.Bounds(); mr.Dx() != e.w || mr.Dy() != e.h {
			return nil, fmt.Errorf("the mask is %dx%d, the image %dx%d: they must have the same size", mr.Dx(), mr.Dy(), e.w, e.h)
		}
	}
	e.area = make([]bool, e.w*e.h)
	found := false
	ar := alpha.Bounds()
	for y := range e.h {
		for x := range e.w {
			if _, _, _, a := alpha.At(ar.Min.X+x, ar.Min.Y+y).RGBA(); a == 0 {
				e.area[y*e.w+x], found = true, true
			}
		}
	}
	if !found {
		return nil, errors.New("nothing to edit: the mask (or, without one, the image) has no fully transparent pixel, which marks the area to edit")
	}
	opaque := image.NewNRGBA(image.Rect(0, 0, e.w, e.h))
	draw.Draw(opaque, opaque.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(opaque, opaque.Bounds(), pic, r.Min, draw.Over) // a transparent pixel, to be edited, is white
	var out bytes.Buffer
	_ = png.Encode(&out, opaque) // into memory: cannot fail
	e.PNG = out.Bytes()
	return e, nil
}

// decode decodes the PNG or JPEG of part name, refusing one over MaxEditPixels before its
// pixels are read.
func decode(r io.Reader, name string) (image.Image, error) {
	var head bytes.Buffer
	cfg, _, err := image.DecodeConfig(io.TeeReader(r, &head))
	if err != nil {
		return nil, fmt.Errorf("the %s is not a PNG or JPEG image: %v", name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxEditPixels {
		return nil, fmt.Errorf("the %s is %dx%d: an edit's image has at most %d pixels (2048x2048)", name, cfg.Width, cfg.Height, MaxEditPixels)
	}
	pic, _, err := image.Decode(io.MultiReader(&head, r))
	if err != nil {
		return nil, fmt.Errorf("the %s is not a whole PNG or JPEG image: %v", name, err)
	}
	return pic, nil
}

// Mask is the area to edit as a black and white PNG, base64: edit the gray of the pixels
// to edit (Bedrock's 0, black; Vertex AI's 255, white), the others the opposite.
func (e *Edit) Mask(edit uint8) string {
	g := image.NewGray(image.Rect(0, 0, e.w, e.h))
	for i, in := range e.area {
		if in {
			g.Pix[i] = edit
		} else {
			g.Pix[i] = 255 - edit
		}
	}
	var out bytes.Buffer
	_ = png.Encode(&out, g)
	return base64.StdEncoding.EncodeToString(out.Bytes())
}

// Base64 is the opaque image, base64.
func (e *Edit) Base64() string { return base64.StdEncoding.EncodeToString(e.PNG) }

// Answered is an answer already whole (a cloud's images, made OpenAI's) as the stream of a
// passed call: one event with its bytes, named application/json, then the end.
func Answered(b []byte) llm.Stream { return &answered{b: b} }

type answered struct{ b []byte }

func (a *answered) Recv() (llm.Event, error) {
	if a.b == nil {
		return llm.Event{}, io.EOF
	}
	ev := llm.Event{Type: llm.EvData, Field: "application/json", Raw: a.b}
	a.b = nil
	return ev, nil
}

func (a *answered) Close() error { return nil }
