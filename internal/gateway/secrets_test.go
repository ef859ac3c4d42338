package gateway_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/console/oidctest"
	"github.com/sluice-gw/sluice/internal/gateway"
)

// The gateway's own secrets, none of a shape a built-in detector knows (issue 47).
const (
	ownAdminToken  = "correct-horse-battery-staple-admin-42"
	ownProviderKey = "Zt9qL2mX7vB4nC8kD1fG6hJ3pR5sW0yAupstream"
	ownOIDCSecret  = "oidc-client-secret-Qw3rTy7uIo"
	ownStaticKey   = "static-file-key-Mn8bV5cX2zL0kJ"
)

// secretsUpstream is an OpenAI chat server: model "echo" streams an answer that quotes every
// secret of the prompt, each cut across two chunks; model "quote" refuses the gateway's key
// with an error that quotes it back, as OpenAI's "Incorrect API key provided" does.
func secretsUpstream(t *testing.T, secrets []string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if req.Model == "quote" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key at ...","type":"invalid_request_error","code":"invalid_api_key"}}`,
				strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(text string) {
			d, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}}}})
			fmt.Fprintf(w, "data: %s\n\n", d)
			w.(http.Flusher).Flush()
		}
		chunk("Here they are:")
		for _, s := range secrets {
			chunk(" " + s[:len(s)/2])
			chunk(s[len(s)/2:] + ",")
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

// syncBuffer is a log destination the gateway's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOwnSecretsMasked: a prompt and an answer holding the admin token, a provider key of no
// known prefix, an OpenID Connect client secret, a key of the file (known by its hash) and a
// virtual key made at run time are masked in the client's stream, in the request log as
// GET /admin/logs, its record and its JSONL and CSV exports show it, in the SQLite file's
// bytes, in the gateway's log lines and in the audit log; an upstream error quoting the
// provider key is masked in the client's error and in the record (issue 47). The
// openai_key detector, which finds the gateway's keys by their sk- today, is switched off.
func TestOwnSecretsMasked(t *testing.T) {
	p := oidctest.New(t)
	dir := t.TempDir()
	sum := sha256.Sum256([]byte(ownStaticKey))
	fixed := []string{ownAdminToken, ownProviderKey, ownOIDCSecret, ownStaticKey}
	up := secretsUpstream(t, fixed)
	yaml := `auth: {admin_token: ` + ownAdminToken + `}
keys: [{name: file-key, hash: ` + hex.EncodeToString(sum[:]) + `}]
providers:
  up: {kind: openai-compatible, base_url: "` + up.URL + `", api_key: "${UP_KEY}"}
models:
  echo: [up/echo]
  quote: [up/quote]
redaction: {detectors: {openai_key: false}} # the gateway's own keys are masked all the same
logs: {url: "sqlite://` + filepath.Join(dir, "logs.db") + `", capture: content}
console:
  oidc:
    - {name: test, issuer: "` + p.URL + `", client_id: sluice, client_secret: ` + ownOIDCSecret + `,
       redirect_url: "http://127.0.0.1:1/console/oidc/test/callback", default_role: viewer}
`
	cfg, err := config.ParseWith([]byte(yaml), "test.yaml", func(k string) (string, bool) {
		return map[string]string{"UP_KEY": ownProviderKey}[k], k == "UP_KEY"
	})
	if err != nil {
		t.Fatal(err)
	}
	var logBuf syncBuffer
	h, err := gateway.New(cfg, slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(h)
	closed := false
	closeAll := func() {
		if !closed {
			closed = true
			gw.Close()
			_ = h.Close()
		}
	}
	t.Cleanup(closeAll)

	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, gw.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	admin := func(method, path, body string) (int, string) { return call(method, path, ownAdminToken, body) }
	// A key made at run time; its name quotes the admin token, as a careless operator's might.
	st, body := admin("POST", "/admin/keys", `{"name":"ci `+ownAdminToken+`"}`)
	var made struct{ Key string }
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &made) != nil || made.Key == "" {
		t.Fatalf("POST /admin/keys: %d %s", st, body)
	}
	secrets := append(fixed, made.Key)

	chatReq := func(model, key string) (int, string) {
		msg, _ := json.Marshal("check these: " + strings.Join(secrets, " ; ") + " and " + made.Key)
		return call("POST", "/v1/chat/completions", key,
			`{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":`+string(msg)+`}]}`)
	}
	leaks := func(where, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q: %s", where, s, clipText(text))
			}
		}
	}
	st, stream := chatReq("echo", made.Key)
	if st != 200 || !strings.Contains(stream, "Here they") {
		t.Fatalf("echo: %d %s", st, stream)
	}
	leaks("the client's stream", stream)
	st, refused := chatReq("quote", ownStaticKey)
	if st < 400 {
		t.Fatalf("quote: got %d, want an error: %s", st, refused)
	}
	leaks("the client's error", refused)

	var list string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, list = admin("GET", "/admin/logs?limit=10", "")
		if st == 200 && strings.Count(list, `"capture":"content"`) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /admin/logs: %d %s; want 2 captured records", st, list)
		}
	}
	if !strings.Contains(list, "[REDACTED:") || !strings.Contains(list, "check these") {
		t.Errorf("GET /admin/logs: want the captured content, masked: %s", clipText(list))
	}
	leaks("GET /admin/logs", list)
	var page struct {
		Data []struct{ ID, Error string }
	}
	_ = json.Unmarshal([]byte(list), &page)
	for _, r := range page.Data {
		_, one := admin("GET", "/admin/logs/"+r.ID, "")
		leaks("GET /admin/logs/"+r.ID, one)
	}
	for _, f := range []string{"jsonl", "csv"} {
		st, exp := admin("GET", "/admin/logs/export?format="+f, "")
		if st != 200 || f == "jsonl" && !strings.Contains(exp, "check these") { // CSV has no content
			t.Errorf("export %s: %d %s", f, st, clipText(exp))
		}
		leaks("the "+f+" export", exp)
	}
	st, audit := admin("GET", "/admin/audit", "")
	if st != 200 || !strings.Contains(audit, "POST /admin/keys") {
		t.Errorf("GET /admin/audit: %d %s", st, audit)
	}
	leaks("the audit log", audit)

	closeAll() // the store's last writes, then its files
	files, _ := filepath.Glob(filepath.Join(dir, "logs.db*"))
	if len(files) == 0 {
		t.Fatal("no SQLite file")
	}
	var stored []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b...)
	}
	if !bytes.Contains(stored, []byte("check these")) {
		t.Error("the SQLite file holds no captured content: the check below would prove nothing")
	}
	leaks("the SQLite file", string(stored))
	leaks("the gateway's log", logBuf.String())
}

func clipText(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
