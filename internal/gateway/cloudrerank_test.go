package gateway_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
)

// googleServiceAccount writes a service-account key file whose token_uri is a loopback
// token endpoint handing out token, and returns its path.
func googleServiceAccount(t *testing.T, token string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("assertion") == "" {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"`+token+`","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(ts.Close)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "gw@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": ts.URL + "/token"})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCloudRerankFallback: a rerank alias over Bedrock's Rerank API and Vertex AI's ranking
// API, both speaking their real wires on loopback. Bedrock's call is SigV4-signed for its
// region (the upstream recomputes the signature) on /rerank; when it fails (500, its body
// quoting the session token) or answers a 200 that is not its wire's, the chain falls back
// to Vertex AI, whose answer reaches the client in the Cohere/Jina shape, with its search
// units. When both fail, the client gets
// an error in its wire's shape, a 5xx, with no credential in it.
func TestCloudRerankFallback(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDRERANKGW", SecretAccessKey: "rerank-gw-SECRET", SessionToken: "rerank-gw-SESSION"}
	bedrocktest.EnvCredentials(t, creds)
	const token = "ya29.gw-rerank-SECRET"

	var brCalls, vxCalls atomic.Int32
	var brStatus, vxStatus atomic.Int32
	brStatus.Store(500)
	vxStatus.Store(200)
	var verr atomic.Value
	br := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		brCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if err := bedrocktest.VerifySigV4(r, body, creds, "us-west-2", time.Now()); err != nil || r.URL.Path != "/rerank" ||
			!strings.Contains(string(body), `"modelArn":"arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0"`) {
			verr.Store(r.URL.Path + " " + string(body))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if brStatus.Load() == 299 { // a 200 that is not the Rerank API's answer
			io.WriteString(w, `<html><body>Service Unavailable</body></html>`)
			return
		}
		if s := brStatus.Load(); s != 200 {
			w.Header().Set("X-Amzn-Errortype", "InternalServerException")
			w.WriteHeader(int(s))
			io.WriteString(w, `{"message":"internal error for session `+r.Header.Get("X-Amz-Security-Token")+`"}`)
			return
		}
		io.WriteString(w, `{"results":[{"index":0,"relevanceScore":0.8},{"index":1,"relevanceScore":0.1}]}`)
	}))
	t.Cleanup(br.Close)
	vx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vxCalls.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/v1/projects/proj/locations/global/rankingConfigs/default_ranking_config:rank" ||
			!strings.Contains(string(body), `"model":"semantic-ranker-default@latest"`) {
			verr.Store(r.URL.Path + " " + string(body))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if s := vxStatus.Load(); s != 200 {
			w.WriteHeader(int(s))
			io.WriteString(w, `{"error":{"code":503,"message":"unavailable for `+r.Header.Get("Authorization")+`","status":"UNAVAILABLE"}}`)
			return
		}
		io.WriteString(w, `{"records":[{"id":"1","score":0.97},{"id":"0","score":0.02}]}`)
	}))
	t.Cleanup(vx.Close)

	g := serve(t, `
providers:
  br: {kind: bedrock, region: us-west-2, base_url: "${BR_URL}"}
  vx: {kind: vertex, project: proj, location: us-central1, base_url: "${VX_URL}", credentials_file: "${VX_FILE}"}
rerank:
  rr: [br/cohere.rerank-v3-5:0, vx/semantic-ranker-default@latest]
`, map[string]string{"BR_URL": br.URL, "VX_URL": vx.URL, "VX_FILE": googleServiceAccount(t, token)}, io.Discard)

	post := func() (int, http.Header, string) {
		res, err := http.Post(g.URL+"/v1/rerank", "application/json",
			strings.NewReader(`{"model":"rr","query":"capital of France","documents":["Paris is the capital of France.","Berlin"],"return_documents":true}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	status, h, body := post()
	want := `{"model":"semantic-ranker-default@latest","results":[{"index":1,"relevance_score":0.97,"document":{"text":"Berlin"}},` +
		`{"index":0,"relevance_score":0.02,"document":{"text":"Paris is the capital of France."}}],"meta":{"billed_units":{"search_units":1}}}`
	if status != 200 || body != want || h.Get("X-Sluice-Target") != "vx/semantic-ranker-default@latest" || brCalls.Load() != 1 || vxCalls.Load() != 1 {
		t.Fatalf("got %d %s (target %q), bedrock calls %d, vertex calls %d, want vertex's answer after bedrock's 500 (upstream refused: %v)",
			status, body, h.Get("X-Sluice-Target"), brCalls.Load(), vxCalls.Load(), verr.Load())
	}

	// Bedrock answering: its answer, signed and translated, first.
	brStatus.Store(200)
	if status, h, body = post(); status != 200 || h.Get("X-Sluice-Target") != "br/cohere.rerank-v3-5:0" ||
		!strings.Contains(body, `"results":[{"index":0,"relevance_score":0.8,"document":{"text":"Paris is the capital of France."}}`) {
		t.Errorf("bedrock answering: got %d %s (target %q; upstream refused: %v)", status, body, h.Get("X-Sluice-Target"), verr.Load())
	}

	// Bedrock answering 200 with something other than its wire's answer: vertex's answer.
	brStatus.Store(299)
	if status, h, body = post(); status != 200 || h.Get("X-Sluice-Target") != "vx/semantic-ranker-default@latest" || body != want {
		t.Errorf("bedrock's malformed answer: got %d %s (target %q), want vertex's answer", status, body, h.Get("X-Sluice-Target"))
	}

	// Both failing: an error in the client's shape, no credential in it.
	brStatus.Store(500)
	vxStatus.Store(503)
	status, _, body = post()
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if status < 500 || json.Unmarshal([]byte(body), &e) != nil || e.Error == nil || e.Error.Message == "" {
		t.Errorf("both failing: got %d %s, want a 5xx error in the client's shape", status, body)
	}
	for _, secret := range []string{creds.SecretAccessKey, creds.SessionToken, token} {
		if strings.Contains(body, secret) {
			t.Errorf("the error shows a credential: %s", body)
		}
	}
}

// TestCloudEmbeddings: /v1/embeddings on Bedrock (Titan through InvokeModel, SigV4-signed)
// and Vertex AI (predict, with the service account's token), each answering in OpenAI's
// list; a Titan call failing with a 500 quoting the session token is a 5xx in OpenAI's
// error shape without it.
func TestCloudEmbeddings(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDEMBEDGW", SecretAccessKey: "embed-gw-SECRET", SessionToken: "embed-gw-SESSION"}
	bedrocktest.EnvCredentials(t, creds)
	const token = "ya29.gw-embed-SECRET"
	var fail atomic.Bool
	br := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if err := bedrocktest.VerifySigV4(r, body, creds, "us-west-2", time.Now()); err != nil || r.URL.EscapedPath() != "/model/amazon.titan-embed-text-v2%3A0/invoke" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if fail.Load() {
			w.WriteHeader(500)
			io.WriteString(w, `{"message":"failed for `+r.Header.Get("X-Amz-Security-Token")+`"}`)
			return
		}
		io.WriteString(w, `{"embedding":[0.5,0.25],"inputTextTokenCount":3}`)
	}))
	t.Cleanup(br.Close)
	vx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/v1/projects/proj/locations/us-central1/publishers/google/models/text-embedding-005:predict" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"predictions":[{"embeddings":{"statistics":{"truncated":false,"token_count":4},"values":[0.125]}}]}`)
	}))
	t.Cleanup(vx.Close)
	g := serve(t, `
providers:
  br: {kind: bedrock, region: us-west-2, base_url: "${BR_URL}"}
  vx: {kind: vertex, project: proj, location: us-central1, base_url: "${VX_URL}", credentials_file: "${VX_FILE}"}
embeddings:
  titan: [br/amazon.titan-embed-text-v2:0]
  gecko: [vx/text-embedding-005]
`, map[string]string{"BR_URL": br.URL, "VX_URL": vx.URL, "VX_FILE": googleServiceAccount(t, token)}, io.Discard)
	post := func(model string) (int, string) {
		res, err := http.Post(g.URL+"/v1/embeddings", "application/json", strings.NewReader(`{"model":"`+model+`","input":"hello"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for model, want := range map[string]string{
		"titan": `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"amazon.titan-embed-text-v2:0","usage":{"prompt_tokens":3,"total_tokens":3}}`,
		"gecko": `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.125]}],"model":"text-embedding-005","usage":{"prompt_tokens":4,"total_tokens":4}}`,
	} {
		if status, body := post(model); status != 200 || body != want {
			t.Errorf("%s: got %d %s\nwant %s", model, status, body, want)
		}
	}
	fail.Store(true)
	status, body := post("titan")
	if status < 500 || !strings.Contains(body, `"error"`) || strings.Contains(body, creds.SessionToken) || strings.Contains(body, creds.SecretAccessKey) {
		t.Errorf("titan failing: got %d %s, want a 5xx error without the credentials", status, body)
	}
}
