package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
	"github.com/sluice-gw/sluice/internal/provider/retrieval/edittest"
)

// TestCloudImageEdits: /v1/images/edits (OpenAI's multipart) on an images alias over
// Bedrock's Nova Canvas (INPAINTING, SigV4 signed) and Vertex AI's Imagen capability model
// (predict, the edit shape), both speaking their real wires on loopback: Bedrock failing
// (500) falls back to Imagen before the client saw a byte; Bedrock answering is OpenAI's
// b64_json list, the image priced. A mask of another size is the client's 400, no upstream
// called.
func TestCloudImageEdits(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDEDITGW", SecretAccessKey: "edit-gw-SECRET", SessionToken: "edit-gw-SESSION"}
	bedrocktest.EnvCredentials(t, creds)
	const token = "ya29.gw-edit-SECRET"
	var brCalls, vxCalls, brStatus atomic.Int32
	brStatus.Store(500)
	var verr atomic.Value
	br := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		brCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		var b struct {
			TaskType string
			Params   struct{ Image, Text, MaskImage string } `json:"inPaintingParams"`
		}
		w.Header().Set("Content-Type", "application/json")
		if err := bedrocktest.VerifySigV4(r, body, creds, "us-west-2", time.Now()); err != nil || r.URL.EscapedPath() != "/model/amazon.nova-canvas-v1%3A0/invoke" ||
			json.Unmarshal(body, &b) != nil || b.TaskType != "INPAINTING" || b.Params.Text != "a red boat" || !edittest.Opaque(b.Params.Image) {
			verr.Store(r.URL.Path + " " + string(body[:min(len(body), 200)]))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if g, err := edittest.Gray(b.Params.MaskImage); err != nil || g.GrayAt(0, 0).Y != 0 || g.GrayAt(3, 0).Y != 255 {
			verr.Store("the mask is not Bedrock's")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if s := brStatus.Load(); s != 200 {
			w.Header().Set("X-Amzn-Errortype", "InternalServerException")
			w.WriteHeader(int(s))
			io.WriteString(w, `{"message":"internal error"}`)
			return
		}
		io.WriteString(w, `{"images":["QkVEUk9DSw=="]}`)
	}))
	t.Cleanup(br.Close)
	vx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vxCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/v1/projects/proj/locations/us-central1/publishers/google/models/imagen-3.0-capability-001:predict" ||
			!strings.Contains(string(body), `"editMode":"EDIT_MODE_INPAINT_INSERTION"`) || !strings.Contains(string(body), `"referenceType":"REFERENCE_TYPE_MASK"`) {
			verr.Store(r.URL.Path + " " + string(body[:min(len(body), 200)]))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"predictions":[{"mimeType":"image/png","bytesBase64Encoded":"SU1BR0VO"}]}`)
	}))
	t.Cleanup(vx.Close)
	g := serve(t, `
providers:
  br: {kind: bedrock, region: us-west-2, base_url: "${BR_URL}"}
  vx: {kind: vertex, project: proj, location: us-central1, base_url: "${VX_URL}", credentials_file: "${VX_FILE}"}
images:
  ed: [br/amazon.nova-canvas-v1:0, vx/imagen-3.0-capability-001]
`, map[string]string{"BR_URL": br.URL, "VX_URL": vx.URL, "VX_FILE": googleServiceAccount(t, token)}, io.Discard)

	edit := func(mask []byte) (int, http.Header, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.WriteField("model", "ed")
		mw.WriteField("prompt", "a red boat")
		fw, _ := mw.CreateFormFile("image", "boat.png")
		fw.Write(edittest.Holed(4, 2, false))
		fw, _ = mw.CreateFormFile("mask", "mask.png")
		fw.Write(mask)
		mw.Close()
		res, err := http.Post(g.URL+"/v1/images/edits", mw.FormDataContentType(), &b)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(out)
	}
	image := func(body string) string {
		var a struct {
			Data []struct {
				B64JSON string `json:"b64_json"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &a) != nil || len(a.Data) != 1 {
			return ""
		}
		return a.Data[0].B64JSON
	}
	mask := edittest.Holed(4, 2, true)
	if status, h, body := edit(mask); status != 200 || image(body) != "SU1BR0VO" || h.Get("X-Sluice-Target") != "vx/imagen-3.0-capability-001" || brCalls.Load() != 1 {
		t.Fatalf("bedrock failing: got %d %s (target %q), bedrock calls %d; want imagen's image (upstream refused: %v)", status, body, h.Get("X-Sluice-Target"), brCalls.Load(), verr.Load())
	}
	brStatus.Store(200)
	if status, h, body := edit(mask); status != 200 || image(body) != "QkVEUk9DSw==" || h.Get("X-Sluice-Target") != "br/amazon.nova-canvas-v1:0" || h.Get("X-Sluice-Cost-Usd") != "0.04" {
		t.Errorf("bedrock answering: got %d %s (target %q, cost %q; upstream refused: %v)", status, body, h.Get("X-Sluice-Target"), h.Get("X-Sluice-Cost-Usd"), verr.Load())
	}
	calls := brCalls.Load() + vxCalls.Load()
	if status, _, body := edit(edittest.Holed(2, 2, true)); status != 400 || !strings.Contains(body, "the mask is 2x2") || brCalls.Load()+vxCalls.Load() != calls {
		t.Errorf("a mask of another size: got %d %s, want the client's 400, no upstream called", status, body)
	}
}
