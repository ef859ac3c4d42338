package bedrock

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/retrieval/edittest"
)

// An edit is one signed InvokeModel call with the INPAINTING body: the image made opaque,
// the prompt, and OpenAI's mask (transparent: to edit) as Bedrock's (black: to edit, white:
// kept), numberOfImages from n; the images are OpenAI's b64_json list, whole.
func TestImageEdit(t *testing.T) {
	p := &painter{answer: `{"images":["iVBORw0KGgo=","AAAA"],"error":null}`}
	c := invokeClient(t, p)
	req := edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, false), "mask": edittest.Holed(4, 2, true)},
		"prompt", `"a red boat"`, "n", `"2"`, "response_format", `"b64_json"`)
	st, err := c.Pass(context.Background(), "images/edits", "amazon.nova-canvas-v1:0", req)
	if err != nil {
		t.Fatal(err)
	}
	ct, out, err := edittest.Read(st)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Created int64
		Data    []map[string]string
	}
	if ct != "application/json" || json.Unmarshal([]byte(out), &a) != nil || a.Created == 0 || len(a.Data) != 2 || a.Data[1]["b64_json"] != "AAAA" {
		t.Errorf("answer %s %s", ct, out)
	}
	var body struct {
		TaskType string
		Params   struct {
			Image, Text, MaskImage string
		} `json:"inPaintingParams"`
		Config map[string]int `json:"imageGenerationConfig"`
	}
	if len(p.bodys) != 1 || p.paths[0] != "/model/amazon.nova-canvas-v1%3A0/invoke" || json.Unmarshal([]byte(p.bodys[0]), &body) != nil {
		t.Fatalf("request %q %q", p.paths, p.bodys)
	}
	if body.TaskType != "INPAINTING" || body.Params.Text != "a red boat" || !edittest.Opaque(body.Params.Image) || len(body.Config) != 1 || body.Config["numberOfImages"] != 2 {
		t.Errorf("request %s", p.bodys[0])
	}
	g, err := edittest.Gray(body.Params.MaskImage)
	if err != nil || g.Bounds().Dx() != 4 || g.GrayAt(0, 0).Y != 0 || g.GrayAt(1, 1).Y != 0 || g.GrayAt(2, 0).Y != 255 || g.GrayAt(3, 1).Y != 255 {
		t.Errorf("maskImage: %v %v, want black on the left half (to edit), white on the right", g, err)
	}
}

// A bad edit is the client's 400 and calls nothing: no area to edit, a mask of another
// size, response_format url, a model that is no image model, no image; another path is a
// 404. An upstream failure is Unavailable, so the chain falls back.
func TestImageEditFaults(t *testing.T) {
	p := &painter{answer: `{"images":["AAAA"]}`}
	c := invokeClient(t, p)
	img := edittest.Holed(4, 2, true)
	for _, tt := range []struct {
		model string
		req   *llm.Request
	}{
		{"amazon.nova-canvas-v1:0", edittest.Request(map[string][]byte{"image": edittest.Holed(4, 2, false)}, "prompt", `"p"`)},
		{"amazon.nova-canvas-v1:0", edittest.Request(map[string][]byte{"image": img, "mask": edittest.Holed(2, 2, true)}, "prompt", `"p"`)},
		{"amazon.nova-canvas-v1:0", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`, "response_format", `"url"`)},
		{"amazon.nova-canvas-v1:0", edittest.Request(nil, "prompt", `"p"`)},
		{"stability.sd3-large-v1:0", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`)},
	} {
		_, err := c.Pass(context.Background(), "images/edits", tt.model, tt.req)
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Invalid || e.Status != http.StatusBadRequest {
			t.Errorf("%s %+v: got %v, want Invalid 400", tt.model, tt.req.Extra, err)
		}
	}
	var e *llm.Error
	if _, err := c.Pass(context.Background(), "audio/speech", "amazon.nova-canvas-v1:0", &llm.Request{}); !errorsAs(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("audio/speech: got %v, want 404", err)
	}
	if len(p.bodys) != 0 {
		t.Errorf("refused requests were sent: %q", p.bodys)
	}
	c = invokeClient(t, &painter{status: 500, answer: `{"message":"internal failure for token %s"}`})
	_, err := c.Pass(context.Background(), "images/edits", "amazon.titan-image-generator-v2:0", edittest.Request(map[string][]byte{"image": img}, "prompt", `"p"`))
	if !errorsAs(err, &e) || e.Kind != llm.Unavailable || strings.Contains(e.Error(), rerankCreds.SessionToken) {
		t.Errorf("500: got %v, want Unavailable without the session token", err)
	}
}
