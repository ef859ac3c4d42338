package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/server"
)

// logBuffer collects a gateway's log lines; safe for concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveGate serves a gateway built from yaml, its limits counted over window, its log in
// log (nil: discarded). It is closed at cleanup, Redis connections included.
func serveGate(t *testing.T, yaml string, vars map[string]string, window time.Duration, log io.Writer) string {
	t.Helper()
	url, _ := serveServer(t, yaml, vars, window, log)
	return url
}

// serveServer is serveGate, with the server.
func serveServer(t *testing.T, yaml string, vars map[string]string, window time.Duration, log io.Writer) (string, *server.Server) {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	srv := buildConfig(t, yaml, vars, log)
	server.SetLimitWindow(srv, window)
	hs := listen(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return hs.URL, srv
}

// reply is a whole response.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// errCode is the error body's code, "" when there is none.
func (r reply) errCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// do sends one request with the key (Bearer; "" for none) and the header pairs given, and
// reads the whole answer.
func do(t *testing.T, method, url, key, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, req)
}

// send sends req and reads the whole answer.
func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// createKey makes a key through the admin API and returns its id and secret.
func createKey(t *testing.T, url, adminToken, body string) (id, secret string) {
	t.Helper()
	r := do(t, "POST", url+"/admin/keys", adminToken, body)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /admin/keys: got %d %s, want 201", r.status, r.body)
	}
	var k struct{ ID, Key string }
	if err := json.Unmarshal(r.body, &k); err != nil || k.ID == "" || k.Key == "" {
		t.Fatalf("POST /admin/keys: got %s, want an id and the key", r.body)
	}
	return k.ID, k.Key
}

const simConfig = `
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
  fast: [sim/echo]
`
