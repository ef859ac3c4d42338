package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
)

// TestCloudImagesFallback: an images alias over Bedrock's Nova Canvas (InvokeModel, SigV4
// signed for its region, the TEXT_IMAGE body) and Vertex AI's Imagen (predict, the service
// account's token), both speaking their real wires on loopback. When Bedrock fails (500,
// its body quoting the session token) or answers a 200 that is not its wire's, the chain
// falls back to Imagen, whose images reach the client as OpenAI's b64_json list; both
// failing is a 5xx in OpenAI's shape with no credential in it. response_format url is the
// client's 400, as a JSON body to /v1/images/edits (a multipart route) is. Each image
// is priced from the price table (0.04 for Nova Canvas and Imagen 3).
func TestCloudImagesFallback(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDIMAGEGW", SecretAccessKey: "image-gw-SECRET", SessionToken: "image-gw-SESSION"}
	bedrocktest.EnvCredentials(t, creds)
	const token = "ya29.gw-image-SECRET"

	var brCalls, vxCalls, brStatus, vxStatus atomic.Int32
	brStatus.Store(500)
	vxStatus.Store(200)
	var verr atomic.Value
	br := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		brCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if err := bedrocktest.VerifySigV4(r, body, creds, "us-west-2", time.Now()); err != nil || r.URL.EscapedPath() != "/model/amazon.nova-canvas-v1%3A0/invoke" ||
			string(body) != `{"taskType":"TEXT_IMAGE","textToImageParams":{"text":"a lighthouse"},"imageGenerationConfig":{"numberOfImages":1,"width":1024,"height":1024}}` {
			verr.Store(r.URL.Path + " " + string(body))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		switch s := brStatus.Load(); s {
		case 200:
			io.WriteString(w, `{"images":["QkVEUk9DSw=="]}`)
		case 299: // a 200 that is not InvokeModel's answer
			io.WriteString(w, `<html><body>Service Unavailable</body></html>`)
		default:
			w.Header().Set("X-Amzn-Errortype", "InternalServerException")
			w.WriteHeader(int(s))
			io.WriteString(w, `{"message":"internal error for session `+r.Header.Get("X-Amz-Security-Token")+`"}`)
		}
	}))
	t.Cleanup(br.Close)
	vx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vxCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/v1/projects/proj/locations/us-central1/publishers/google/models/imagen-3.0-generate-002:predict" ||
			string(body) != `{"instances":[{"prompt":"a lighthouse"}],"parameters":{"sampleCount":1,"aspectRatio":"1:1"}}` {
			verr.Store(r.URL.Path + " " + string(body))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if s := vxStatus.Load(); s != 200 {
			w.WriteHeader(int(s))
			io.WriteString(w, `{"error":{"code":503,"message":"unavailable for `+r.Header.Get("Authorization")+`","status":"UNAVAILABLE"}}`)
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
  img: [br/amazon.nova-canvas-v1:0, vx/imagen-3.0-generate-002]
`, map[string]string{"BR_URL": br.URL, "VX_URL": vx.URL, "VX_FILE": googleServiceAccount(t, token)}, io.Discard)

	post := func(path, body string) (int, http.Header, string) {
		res, err := http.Post(g.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	const gen = `{"model":"img","prompt":"a lighthouse","size":"1024x1024"}`
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
	status, h, body := post("/v1/images/generations", gen)
	if status != 200 || image(body) != "SU1BR0VO" || h.Get("X-Sluice-Target") != "vx/imagen-3.0-generate-002" || h.Get("X-Sluice-Cost-Usd") != "0.04" ||
		brCalls.Load() != 1 || vxCalls.Load() != 1 {
		t.Fatalf("got %d %s (target %q), bedrock calls %d, vertex calls %d, want imagen's image after bedrock's 500 (upstream refused: %v)",
			status, body, h.Get("X-Sluice-Target"), brCalls.Load(), vxCalls.Load(), verr.Load())
	}

	brStatus.Store(200)
	if status, h, body = post("/v1/images/generations", gen); status != 200 || image(body) != "QkVEUk9DSw==" || h.Get("X-Sluice-Target") != "br/amazon.nova-canvas-v1:0" ||
		h.Get("X-Sluice-Cost-Usd") != "0.04" {
		t.Errorf("bedrock answering: got %d %s (target %q, cost %q; upstream refused: %v)", status, body, h.Get("X-Sluice-Target"), h.Get("X-Sluice-Cost-Usd"), verr.Load())
	}

	brStatus.Store(299)
	if status, h, body = post("/v1/images/generations", gen); status != 200 || image(body) != "SU1BR0VO" || h.Get("X-Sluice-Target") != "vx/imagen-3.0-generate-002" {
		t.Errorf("bedrock's malformed answer: got %d %s (target %q), want imagen's image", status, body, h.Get("X-Sluice-Target"))
	}

	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	calls := brCalls.Load() + vxCalls.Load()
	if status, _, body = post("/v1/images/generations", `{"model":"img","prompt":"a lighthouse","response_format":"url"}`); status != 400 ||
		json.Unmarshal([]byte(body), &e) != nil || e.Error == nil || !strings.Contains(e.Error.Message, "response_format url") || brCalls.Load()+vxCalls.Load() != calls {
		t.Errorf("response_format url: got %d %s, want the client's 400 in OpenAI's shape, no upstream called", status, body)
	}
	if status, _, body = post("/v1/images/edits", `{"model":"img","prompt":"p"}`); status < 400 || status >= 500 || brCalls.Load()+vxCalls.Load() != calls {
		t.Errorf("a JSON edit: got %d %s, want a 4xx and no upstream called", status, body)
	}

	brStatus.Store(500)
	vxStatus.Store(503)
	status, _, body = post("/v1/images/generations", gen)
	e.Error = nil
	if status < 500 || json.Unmarshal([]byte(body), &e) != nil || e.Error == nil || e.Error.Message == "" {
		t.Errorf("both failing: got %d %s, want a 5xx error in the client's shape", status, body)
	}
	for _, secret := range []string{creds.SecretAccessKey, creds.SessionToken, token} {
		if strings.Contains(body, secret) {
			t.Errorf("the error shows a credential: %s", body)
		}
	}
}
