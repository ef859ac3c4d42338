package gemini

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// tokenServer is a loopback OAuth token endpoint for a service account: it checks the JWT
// bearer assertion's RS256 signature with the account's public key and its claims (issuer,
// audience, scope, expiry), then issues ya29.vertex-<n> tokens that expire after expiresIn
// seconds; fail makes it refuse (invalid_grant).
type tokenServer struct {
	*httptest.Server
	key       *rsa.PrivateKey
	email     string
	expiresIn int
	fail      atomic.Bool
	calls     atomic.Int32
}

// accountKey is the test service account's key, made once: a 2048-bit key takes a while
// under the race detector.
var accountKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

func newTokenServer(t *testing.T, expiresIn int) *tokenServer {
	t.Helper()
	key, err := accountKey()
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{key: key, email: "sluice@proj.iam.gserviceaccount.com", expiresIn: expiresIn}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	n := ts.calls.Add(1)
	r.ParseForm()
	if err := ts.check(r.PostForm.Get("grant_type"), r.PostForm.Get("assertion")); err != nil || ts.fail.Load() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, fmt.Sprint(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"ya29.vertex-%d","expires_in":%d,"token_type":"Bearer"}`, n, ts.expiresIn)
}

func (ts *tokenServer) check(grant, assertion string) error {
	if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return fmt.Errorf("grant_type %q", grant)
	}
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&ts.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature: %v", err)
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Iss, Aud, Scope string
		Exp             int64
	}
	json.Unmarshal(b, &c)
	if c.Iss != ts.email || c.Aud != ts.URL+"/token" || c.Scope != vertexScope || c.Exp < time.Now().Unix() {
		return fmt.Errorf("claims %+v", c)
	}
	return nil
}

// keyFile writes the service account's JSON key file, its token_uri the loopback endpoint.
func (ts *tokenServer) keyFile(t *testing.T) string {
	t.Helper()
	der, _ := x509.MarshalPKCS8PrivateKey(ts.key)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": ts.email,
		"client_id": "1", "token_uri": ts.URL + "/token"})
	p := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// vertexUpstream answers a Gemini call on the Vertex path with a short text, and records
// the bearer token of each call.
func vertexUpstream(t *testing.T, tokens *[]string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		*tokens = append(*tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if r.URL.Path != "/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`+"\r\n\r\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func callVertex(t *testing.T, c *Client) error {
	t.Helper()
	r := testRequest()
	s, err := c.Stream(context.Background(), r)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, end := providertest.Drain(t, s); end != io.EOF {
		t.Fatalf("end %v", end)
	}
	return nil
}

// TestVertexServiceAccount: a service-account key file is exchanged for a token at its
// token endpoint (the JWT checked there), the token is cached across calls and sent as a
// bearer token; a token about to expire is replaced before the call; a refusal of the token
// endpoint is the target's Auth failure and nothing is sent.
func TestVertexServiceAccount(t *testing.T) {
	ts := newTokenServer(t, 3600)
	var tokens []string
	up := vertexUpstream(t, &tokens)
	token, src, err := VertexCredentials(ts.keyFile(t), false)
	if err != nil || src != "credentials_file" {
		t.Fatalf("got %v, %q", err, src)
	}
	if ts.calls.Load() != 0 {
		t.Fatalf("the token endpoint was called at start")
	}
	c := New(Config{Name: "vertex", BaseURL: VertexURL(up.URL, "proj", "us-central1"), Token: token})
	for range 2 {
		if err := callVertex(t, c); err != nil {
			t.Fatal(err)
		}
	}
	if ts.calls.Load() != 1 || len(tokens) != 2 || tokens[0] != "ya29.vertex-1" || tokens[1] != "ya29.vertex-1" {
		t.Errorf("token calls %d, tokens sent %q; want one token, cached", ts.calls.Load(), tokens)
	}

	// Tokens that expire within oauth2's early-refresh margin (10 s) are replaced before each call.
	short := newTokenServer(t, 5)
	token, _, _ = VertexCredentials(short.keyFile(t), false)
	tokens = nil
	c = New(Config{Name: "vertex", BaseURL: VertexURL(up.URL, "proj", "us-central1"), Token: token})
	for range 2 {
		if err := callVertex(t, c); err != nil {
			t.Fatal(err)
		}
	}
	if short.calls.Load() != 2 || len(tokens) != 2 || tokens[0] == tokens[1] {
		t.Errorf("token calls %d, tokens %q; want a fresh token for each call", short.calls.Load(), tokens)
	}

	refused := newTokenServer(t, 3600)
	refused.fail.Store(true)
	token, _, _ = VertexCredentials(refused.keyFile(t), false)
	tokens = nil
	err = callVertex(t, New(Config{Name: "vertex", BaseURL: VertexURL(up.URL, "proj", "us-central1"), Token: token}))
	if llm.KindOf(err) != llm.Auth || len(tokens) != 0 {
		t.Errorf("got %v with %d calls, want Auth and no call", err, len(tokens))
	}
}

// TestVertexCredentialSources: ADC is found through GOOGLE_APPLICATION_CREDENTIALS or
// gcloud's file; with neither, nothing (ErrNoCredentials), unless the metadata server is
// asked for, which is then not called until the first token.
func TestVertexCredentialSources(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(dir, "gcloud"))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	var mdCalls atomic.Int32
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mdCalls.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(md.Close)
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(md.URL, "http://"))

	if _, _, err := VertexCredentials("", false); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("nothing: got %v, want ErrNoCredentials", err)
	}
	token, src, err := VertexCredentials("", true)
	if err != nil || src != "metadata server" || mdCalls.Load() != 0 {
		t.Fatalf("metadata: got %v, %q after %d calls", err, src, mdCalls.Load())
	}
	if _, err := token(context.Background()); err == nil || mdCalls.Load() == 0 {
		t.Errorf("the first token: %v after %d metadata calls, want a failure after asking it", err, mdCalls.Load())
	}

	ts := newTokenServer(t, 3600)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", ts.keyFile(t))
	if _, src, err := VertexCredentials("", false); err != nil || src != "application default credentials" {
		t.Errorf("env: got %v, %q", err, src)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	b, _ := os.ReadFile(ts.keyFile(t))
	os.MkdirAll(filepath.Join(dir, "gcloud"), 0o700)
	os.WriteFile(filepath.Join(dir, "gcloud", "application_default_credentials.json"), b, 0o600)
	if _, src, err := VertexCredentials("", false); err != nil || src != "application default credentials" {
		t.Errorf("gcloud file: got %v, %q", err, src)
	}
	if _, _, err := VertexCredentials(filepath.Join(dir, "missing.json"), false); err == nil {
		t.Error("a missing credentials_file: want an error")
	}
}
