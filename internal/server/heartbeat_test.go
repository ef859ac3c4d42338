package server_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/server"
)

// recorder is an in-memory ResponseWriter that can flush, safe for the heartbeat's goroutine.
type recorder struct {
	mu     sync.Mutex
	h      http.Header
	sent   http.Header // the headers as they were when WriteHeader was called
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(s int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status, r.sent = s, r.h.Clone()
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

// simGateway serves the embedded sim provider in-process, so the test runs inside a synctest
// bubble: no socket, fake time.
func simGateway(t *testing.T, models string) *server.Server {
	cfg, err := config.Parse([]byte("heartbeat_interval: 10s\nproviders: {sim: {kind: sim}}\nmodels:\n"+models), "hb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(s *server.Server, model string) *recorder {
	rec := &recorder{h: http.Header{}}
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody(model, true, "")))
	s.ServeHTTP(rec, req)
	return rec
}

func TestHeartbeatBeforeCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  slow: [\"sim/text?first=25s&len=20\"]\n")
		rec := serve(s, "slow")
		body := rec.body.String()
		first := strings.Index(body, "data: ")
		if n := strings.Count(body[:max(first, 0)], ": keepalive\n\n"); first < 0 || n < 2 {
			t.Fatalf("got %d keepalives before the first event in %q, want 2 (at 10s and 20s)", n, body)
		}
		if got := rec.sent.Get("Trailer"); got != "X-Sluice-Target, X-Sluice-Attempts" {
			t.Errorf("got Trailer %q, want the target and attempts declared", got)
		}
		if rec.sent.Get("X-Sluice-Target") != "" || rec.sent.Get("Content-Type") != "text/event-stream" {
			t.Errorf("got early headers %v, want SSE headers and no target yet", rec.sent)
		}
		if got := rec.h.Get("X-Sluice-Target"); got != "sim/text?first=25s&len=20" {
			t.Errorf("got trailer X-Sluice-Target %q, want the served target", got)
		}
		if got := rec.h.Get("X-Sluice-Attempts"); got != "1" {
			t.Errorf("got trailer X-Sluice-Attempts %q, want 1", got)
		}
		if !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Errorf("got %q, want a whole stream", body)
		}
	})
}

func TestHeartbeatThenChainFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  doomed: [\"sim/text?wait=15s&fail=500\", \"sim/text?wait=1s&fail=503\"]\n")
		rec := serve(s, "doomed")
		body := rec.body.String()
		if rec.status != 200 || !strings.HasPrefix(body, ": keepalive\n\n") {
			t.Fatalf("got %d %q, want the headers sent by a keepalive", rec.status, body)
		}
		if !strings.Contains(body, `"code":"all_targets_failed"`) || !strings.Contains(body, "sim/text?wait=15s&fail=500: 500") ||
			!strings.Contains(body, "sim/text?wait=1s&fail=503: 503") {
			t.Errorf("got %q, want an in-band error naming each attempt", body)
		}
		if strings.Contains(body, "[DONE]") {
			t.Errorf("got [DONE] after a failure")
		}
		if got := rec.h.Get("X-Sluice-Attempts"); got != "2" {
			t.Errorf("got trailer X-Sluice-Attempts %q, want 2", got)
		}
	})
}

func TestNoHeartbeatWhenFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  quick: [\"sim/text?len=20\"]\n")
		rec := serve(s, "quick")
		if strings.Contains(rec.body.String(), "keepalive") || rec.sent.Get("X-Sluice-Target") != "sim/text?len=20" || rec.sent.Get("Trailer") != "" {
			t.Errorf("got %v %q, want headers at commit and no keepalive", rec.sent, rec.body.String())
		}
	})
}
