package retrieval

import (
	"encoding/base64"
	"image/color"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/retrieval/edittest"
)

// OpenAI's mask (its fully transparent pixels: the area to edit) becomes the cloud's: the
// gray asked for inside the area, the opposite outside; without a mask the image's own
// transparency is the area. The image sent is opaque, and n and prompt are read.
func TestReadEdit(t *testing.T) {
	mask := edittest.Holed(4, 2, true)
	e, err := ReadEdit(edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, false), "mask": mask}, "prompt", `"a sail"`, "n", `"3"`, "size", `"4x2"`), "Cloud")
	if err != nil {
		t.Fatal(err)
	}
	if e.Prompt != "a sail" || e.Count() != 3 {
		t.Errorf("got prompt %q, n %d", e.Prompt, e.Count())
	}
	for _, edit := range []uint8{0, 255} {
		g, err := edittest.Gray(e.Mask(edit))
		if err != nil {
			t.Fatal(err)
		}
		for y := range 2 {
			for x := range 4 {
				want := 255 - edit
				if x < 2 {
					want = edit
				}
				if got := g.GrayAt(x, y).Y; got != want {
					t.Errorf("edit gray %d: pixel %d,%d is %d, want %d", edit, x, y, got, want)
				}
			}
		}
	}
	// No mask: the image's transparent half is the area, and the image goes opaque.
	e, err = ReadEdit(edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, true)}, "prompt", `"p"`), "Cloud")
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := edittest.Gray(e.Mask(0)); g == nil || g.GrayAt(0, 0).Y != 0 || g.GrayAt(3, 1).Y != 255 {
		t.Errorf("the image's own transparency is not the area")
	}
	if !edittest.Opaque(base64.StdEncoding.EncodeToString(e.PNG)) || e.Base64() != base64.StdEncoding.EncodeToString(e.PNG) {
		t.Errorf("the image sent is not the opaque image")
	}
}

// Bad edits are errors naming what is wrong, never a panic: no image, two images, a file
// that is no image, a mask of another size, nothing transparent, a size not the image's,
// response_format url, n not a number, an image over MaxEditPixels.
func TestReadEditBad(t *testing.T) {
	big := edittest.PNG(2049, 2048, func(int, int) color.NRGBA { return color.NRGBA{} })
	for _, tt := range []struct {
		name   string
		files  map[string][]byte
		fields []string
		want   string
	}{
		{"no image", map[string][]byte{"mask": edittest.Holed(2, 2, true)}, nil, "an image to edit is required"},
		{"two images", map[string][]byte{"image": edittest.Holed(2, 2, true), "image[]": edittest.Holed(2, 2, true)}, nil, "edits one image"},
		{"not an image", map[string][]byte{"image": []byte("GIF89a not really")}, nil, "not a PNG or JPEG"},
		{"truncated", map[string][]byte{"image": edittest.Holed(8, 8, true)[:60]}, nil, "PNG or JPEG"},
		{"mask size", map[string][]byte{"image": edittest.Holed(4, 2, false), "mask": edittest.Holed(2, 2, true)}, nil, "the mask is 2x2, the image 4x2"},
		{"nothing to edit", map[string][]byte{"image": edittest.Holed(2, 2, false)}, nil, "nothing to edit"},
		{"size", map[string][]byte{"image": edittest.Holed(2, 2, true)}, []string{"size", `"1024x1024"`}, "at the image's size, 2x2"},
		{"url", map[string][]byte{"image": edittest.Holed(2, 2, true)}, []string{"response_format", `"url"`}, "response_format url"},
		{"n", map[string][]byte{"image": edittest.Holed(2, 2, true)}, []string{"n", `"two"`}, "n must be an integer"},
		{"too large", map[string][]byte{"image": big}, nil, "at most 4194304 pixels"},
	} {
		_, err := ReadEdit(edittest.Request(tt.files, append([]string{"prompt", `"p"`}, tt.fields...)...), "Cloud")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// FuzzReadEdit: any bytes as the image and the mask are an edit or an error, never a panic.
func FuzzReadEdit(f *testing.F) {
	f.Add(edittest.Holed(4, 2, true), edittest.Holed(4, 2, true))
	f.Add(edittest.Holed(3, 3, false), []byte{})
	f.Fuzz(func(t *testing.T, img, mask []byte) {
		files := map[string][]byte{"image": img}
		if len(mask) > 0 {
			files["mask"] = mask
		}
		e, err := ReadEdit(edittest.Request(files, "prompt", `"p"`), "Cloud")
		if err == nil && (len(e.PNG) == 0 || e.Mask(0) == "") {
			t.Errorf("an edit without its image or mask")
		}
	})
}
