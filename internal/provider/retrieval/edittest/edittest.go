// Package edittest makes the image edits of the tests of the clouds' image edits (issue
// 48): an edit's request as the wire reads it, its images, and the masks the clouds get.
package edittest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// PNG is a w by h PNG whose pixel (x, y) is at(x, y).
func PNG(w, h int, at func(x, y int) color.NRGBA) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetNRGBA(x, y, at(x, y))
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, m) // into memory
	return b.Bytes()
}

// Holed is a red w by h PNG, fully transparent in its left half when hole (OpenAI's area to
// edit).
func Holed(w, h int, hole bool) []byte {
	return PNG(w, h, func(x, _ int) color.NRGBA {
		if hole && x < w/2 {
			return color.NRGBA{}
		}
		return color.NRGBA{R: 255, A: 255}
	})
}

// Request is an image edit of files (by their field: image, image[], mask), as the wire
// reads it, with the fields given as pairs of a name and its JSON value.
func Request(files map[string][]byte, fields ...string) *llm.Request {
	r := &llm.Request{}
	for _, name := range []string{"image", "image[]", "mask"} {
		if b, ok := files[name]; ok {
			r.Files = append(r.Files, llm.NewFilePart(name, name+".png", "image/png", bytes.NewReader(b), 0, int64(len(b))))
		}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		r.Extra = append(r.Extra, llm.Field{Name: fields[i], Value: []byte(fields[i+1])})
	}
	return r
}

// Gray decodes b64, a base64 PNG, as the gray image a cloud's mask is.
func Gray(b64 string) (*image.Gray, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	m, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	g, ok := m.(*image.Gray)
	if !ok {
		return nil, errors.New("the mask is not a gray PNG")
	}
	return g, nil
}

// Opaque reports whether b64, a base64 PNG, has every pixel opaque.
func Opaque(b64 string) bool {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return false
	}
	m, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return false
	}
	r := m.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := m.At(x, y).RGBA(); a != 0xffff {
				return false
			}
		}
	}
	return true
}

// Read is a passed answer whole: its events' bytes, and the first one's media type.
func Read(st llm.Stream) (ct, body string, err error) {
	defer st.Close()
	var b strings.Builder
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			return ct, b.String(), nil
		}
		if err != nil {
			return ct, b.String(), err
		}
		if ct == "" {
			ct = ev.Field
		}
		b.Write(ev.Raw)
	}
}
