package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/retrieval/edittest"
)

// An edit is one predict call of the capability model, in Imagen's edit shape: the prompt,
// the image made opaque as the raw reference image (1), OpenAI's mask (transparent: to
// edit) as the user-provided mask reference image (2, white: to edit), editMode
// EDIT_MODE_INPAINT_INSERTION, sampleCount from n; the images the safety filter let through
// are OpenAI's b64_json list, whole.
func TestImageEdit(t *testing.T) {
	p := &imagen{answer: `{"predictions":[{"mimeType":"image/png","bytesBase64Encoded":"iVBORw0KGgo="},{"raiFilteredReason":"filtered"}]}`}
	c := predictClient(t, p)
	req := edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, true)}, "prompt", `"a red boat"`, "n", `"2"`, "size", `"auto"`)
	st, err := c.Pass(context.Background(), "images/edits", "imagen-3.0-capability-001", req)
	if err != nil {
		t.Fatal(err)
	}
	ct, out, err := edittest.Read(st)
	var a struct{ Data []map[string]string }
	if err != nil || ct != "application/json" || json.Unmarshal([]byte(out), &a) != nil || len(a.Data) != 1 || a.Data[0]["b64_json"] != "iVBORw0KGgo=" {
		t.Errorf("answer %s %s, %v", ct, out, err)
	}
	type ref struct {
		ReferenceType   string
		ReferenceID     int
		ReferenceImage  struct{ BytesBase64Encoded string }
		MaskImageConfig *struct{ MaskMode string }
	}
	var body struct {
		Instances []struct {
			Prompt          string
			ReferenceImages []ref
		}
		Parameters map[string]any
	}
	if len(p.bodies) != 1 || p.paths[0] != "/v1/projects/proj/locations/us-east5/publishers/google/models/imagen-3.0-capability-001:predict" ||
		json.Unmarshal([]byte(p.bodies[0]), &body) != nil || len(body.Instances) != 1 || len(body.Instances[0].ReferenceImages) != 2 {
		t.Fatalf("request %q %q", p.paths, p.bodies)
	}
	in := body.Instances[0]
	raw, mask := in.ReferenceImages[0], in.ReferenceImages[1]
	if in.Prompt != "a red boat" || raw.ReferenceType != "REFERENCE_TYPE_RAW" || raw.ReferenceID != 1 || raw.MaskImageConfig != nil ||
		!edittest.Opaque(raw.ReferenceImage.BytesBase64Encoded) || mask.ReferenceType != "REFERENCE_TYPE_MASK" || mask.ReferenceID != 2 ||
		mask.MaskImageConfig == nil || mask.MaskImageConfig.MaskMode != "MASK_MODE_USER_PROVIDED" ||
		body.Parameters["editMode"] != "EDIT_MODE_INPAINT_INSERTION" || body.Parameters["sampleCount"] != 2.0 {
		t.Errorf("request %s", p.bodies[0])
	}
	g, err := edittest.Gray(mask.ReferenceImage.BytesBase64Encoded)
	if err != nil || g.GrayAt(0, 0).Y != 255 || g.GrayAt(1, 1).Y != 255 || g.GrayAt(2, 0).Y != 0 || g.GrayAt(3, 1).Y != 0 {
		t.Errorf("mask: %v %v, want white on the left half (to edit), black on the right", g, err)
	}
}

// A bad edit is the client's 400 and calls nothing: a model that does not edit (a generate
// model), no area to edit, a size not the image's; another path is a 404. An upstream
// failure is Unavailable, with no token in its words; every image filtered is Unavailable.
func TestImageEditFaults(t *testing.T) {
	p := &imagen{answer: `{"predictions":[]}`}
	c := predictClient(t, p)
	img := edittest.Holed(4, 2, true)
	for _, tt := range []struct {
		model string
		req   *llm.Request
	}{
		{"imagen-3.0-generate-002", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`)},
		{"imagen-3.0-capability-001", edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, false)}, "prompt", `"p"`)},
		{"imagen-3.0-capability-001", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`, "size", `"1024x1024"`)},
		{"imagen-3.0-capability-001", edittest.Request(map[string][]byte{"image": []byte("not an image")}, "prompt", `"p"`)},
	} {
		_, err := c.Pass(context.Background(), "images/edits", tt.model, tt.req)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Invalid || e.Status != http.StatusBadRequest {
			t.Errorf("%s %+v: got %v, want Invalid 400", tt.model, tt.req.Extra, err)
		}
	}
	var e *llm.Error
	if _, err := c.Pass(context.Background(), "audio/transcriptions", "imagen-3.0-capability-001", &llm.Request{}); !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("audio/transcriptions: got %v, want 404", err)
	}
	if len(p.bodies) != 0 {
		t.Errorf("refused requests were sent: %q", p.bodies)
	}
	for _, tt := range []struct {
		status int
		answer string
	}{{500, `{"error":{"code":500,"message":"internal error for %s","status":"INTERNAL"}}`}, {200, `{"predictions":[{"raiFilteredReason":"filtered"}]}`}} {
		c := predictClient(t, &imagen{status: tt.status, answer: tt.answer})
		c.scrub = func(s string) string { return strings.ReplaceAll(s, token, "[key]") }
		_, err := c.Pass(context.Background(), "images/edits", "imagen-3.0-capability-001", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`))
		if !errors.As(err, &e) || e.Kind != llm.Unavailable || strings.Contains(e.Error(), token) {
			t.Errorf("%d %s: got %v, want Unavailable without the token", tt.status, tt.answer, err)
		}
	}
}
