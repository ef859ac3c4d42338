package server_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/server"
)

const uiFleetModels = `
  slow: ["sim/text?len=600&chunk=6&delay=6ms"]
  stall: ["sim/text?len=100&fail=stall&after=3"]
  long: ["sim/text?len=6000000&chunk=1500"]
`

// uiFleet is two gateways sharing one Redis, with a short lease, a fast flush and a small
// window; it returns their servers and URLs, closed at cleanup.
func uiFleet(t *testing.T, srv *redistest.Server) ([2]*server.Server, [2]string) {
	t.Helper()
	yaml := simConfig + uiFleetModels + "auth: {admin_token: " + admin + "}\n" +
		"redis: {url: \"${REDIS_URL}\", timeout: 5s}\n" + "runs: {flush_interval: 10ms}\n"
	var srvs [2]*server.Server
	var urls [2]string
	for i := range srvs {
		s := buildConfig(t, yaml, map[string]string{"REDIS_URL": srv.URL}, io.Discard)
		server.SetRuns(s, 600*time.Millisecond, 0, 64, 256)
		hs := httptest.NewServer(s)
		t.Cleanup(func() {
			hs.Close()
			s.Close()
		})
		srvs[i], urls[i] = s, hs.URL
	}
	return srvs, urls
}

// A run started on A and left by its client is resumed on B: in full, and after any frame,
// byte for byte, while it runs and after it ended.
func TestUIResumeOnOtherReplica(t *testing.T) {
	rs := redistest.Start(t)
	_, gw := uiFleet(t, rs)
	_, key := createKey(t, gw[0], admin, `{"name":"ui"}`)
	ctx, leave := context.WithCancel(context.Background())
	r := uiDo(t, ctx, "POST", gw[0]+"/v1/ui/chat", key, uiBody("chat-1", "slow", "hi"))
	first := sseFrames(t, r.Body, 5)
	leave() // the client disconnects; the run goes on
	r.Body.Close()

	rb := uiDo(t, timeout(t, 20*time.Second), "GET", gw[1]+"/v1/ui/chat/chat-1/stream", key, "")
	if rb.StatusCode != 200 || rb.Header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" {
		t.Fatalf("resume on B: got %d %v, want 200 and the UI stream", rb.StatusCode, rb.Header)
	}
	full := sseFrames(t, rb.Body, -1)
	rb.Body.Close()
	if len(full) < 20 || frameData(full[len(full)-1]) != "[DONE]" {
		t.Fatalf("resume on B: got %d frames ending %q, want the whole run", len(full), full[len(full)-1])
	}
	if strings.Join(first, "") != strings.Join(full[:5], "") {
		t.Errorf("got on B\n%s\nwant what A sent first\n%s", strings.Join(full[:5], ""), strings.Join(first, ""))
	}
	for _, url := range gw {
		after := uiDo(t, timeout(t, 20*time.Second), "GET", url+"/v1/ui/chat/chat-1/stream", key, "", "Last-Event-ID", frameID(full[9]))
		rest := sseFrames(t, after.Body, -1)
		after.Body.Close()
		if after.StatusCode != 200 || strings.Join(rest, "") != strings.Join(full[10:], "") {
			t.Errorf("resume after %s on %s: got %d and %d frames, want the %d after it, byte for byte", frameID(full[9]), url, after.StatusCode, len(rest), len(full)-10)
		}
		if r := uiDo(t, timeout(t, 5*time.Second), "GET", url+"/v1/ui/chat/chat-1/stream", key, ""); r.StatusCode != http.StatusNoContent {
			t.Errorf("plain resume of a finished run: got %d, want 204", r.StatusCode)
		}
	}
}

// A replica that dies mid-run: B's readers get the error end once the lease lapses.
func TestUILeaseLoss(t *testing.T) {
	rs := redistest.Start(t)
	srvs, gw := uiFleet(t, rs)
	_, key := createKey(t, gw[0], admin, `{"name":"ui"}`)
	r := uiDo(t, timeout(t, 20*time.Second), "POST", gw[0]+"/v1/ui/chat", key, uiBody("chat-2", "stall", "hi"))
	defer r.Body.Close()
	if got := sseFrames(t, r.Body, 4); len(got) != 4 {
		t.Fatalf("got %d frames from A, want 4", len(got))
	}
	time.Sleep(50 * time.Millisecond) // the frames reach Redis
	var readers [2]*http.Response
	for i := range readers {
		readers[i] = uiDo(t, timeout(t, 20*time.Second), "GET", gw[1]+"/v1/ui/chat/chat-2/stream", key, "")
		defer readers[i].Body.Close()
	}
	start := time.Now()
	server.CrashRuns(srvs[0])
	for i, rb := range readers {
		frames := sseFrames(t, rb.Body, -1)
		types := strings.Join(chunkTypes(t, frames), ",")
		if !strings.HasPrefix(types, "start,start-step,text-start,text-delta") || !strings.HasSuffix(types, "error,finish,[DONE]") {
			t.Errorf("reader %d on B: got %s, want the run then the error end", i, types)
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("got the error end %v after the crash, want it after the lease (600ms) lapsed", d)
	}
}

// Stop on B stops the run on A, which ends with abort; another key can neither resume nor stop
// the run.
func TestUIStop(t *testing.T) {
	rs := redistest.Start(t)
	_, gw := uiFleet(t, rs)
	_, key := createKey(t, gw[0], admin, `{"name":"owner"}`)
	_, other := createKey(t, gw[0], admin, `{"name":"other"}`)
	r := uiDo(t, timeout(t, 20*time.Second), "POST", gw[0]+"/v1/ui/chat", key, uiBody("chat-3", "stall", "hi"))
	defer r.Body.Close()
	br := bufio.NewReader(r.Body)
	if got := sseFrames(t, br, 4); len(got) != 4 {
		t.Fatalf("got %d frames, want 4", len(got))
	}
	for _, url := range gw {
		if x := do(t, "GET", url+"/v1/ui/chat/chat-3/stream", other, ""); x.status != 404 || x.errCode() != "run_not_found" {
			t.Errorf("resume with another key: got %d %s, want 404 run_not_found", x.status, x.body)
		}
		if x := do(t, "POST", url+"/v1/ui/chat/chat-3/stop", other, ""); x.status != 404 {
			t.Errorf("stop with another key: got %d %s, want 404", x.status, x.body)
		}
	}
	if x := do(t, "POST", gw[0]+"/v1/ui/chat", other, uiBody("chat-3", "default", "hi")); x.status != 409 || x.errCode() != "chat_busy" {
		t.Errorf("a run of another key on the chat: got %d %s, want 409 chat_busy", x.status, x.body)
	}
	start := time.Now()
	x := do(t, "POST", gw[1]+"/v1/ui/chat/chat-3/stop", key, "")
	if x.status != http.StatusAccepted || !strings.Contains(string(x.body), `"status":"stopping"`) {
		t.Fatalf("stop: got %d %s, want 202", x.status, x.body)
	}
	rest := chunkTypes(t, sseFrames(t, br, -1))
	if got := strings.Join(rest[len(rest)-2:], ","); got != "abort,[DONE]" {
		t.Errorf("got the run ending %v, want abort then [DONE]", rest)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stop took %v", d)
	}
	// The run's end reaches Redis with its last write, just after its readers saw it.
	status := 0
	for deadline := time.Now().Add(5 * time.Second); status != http.StatusNoContent && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		status = do(t, "POST", gw[1]+"/v1/ui/chat/chat-3/stop", key, "").status
	}
	if status != http.StatusNoContent {
		t.Errorf("stop of a finished run: got %d, want 204", status)
	}
}

// A client that does not read slows neither the run nor another reader; it is let go when it
// falls behind, and a resume from its last frame completes the run.
func TestUISlowReader(t *testing.T) {
	rs := redistest.Start(t)
	_, gw := uiFleet(t, rs)
	_, key := createKey(t, gw[0], admin, `{"name":"ui"}`)
	r := uiDo(t, timeout(t, 30*time.Second), "POST", gw[0]+"/v1/ui/chat", key, uiBody("chat-4", "long", "hi"))
	defer r.Body.Close()
	br := bufio.NewReader(r.Body)
	head := sseFrames(t, br, 2) // then it stops reading
	// The other reader reads as fast as it can; on a loaded machine (go test -race, other
	// packages in parallel) it may still fall behind this test's small window by itself and
	// be let go, and then it resumes from its last frame, as the AI SDK does.
	var full []string
	for resumes := 0; len(full) == 0 || frameData(full[len(full)-1]) != "[DONE]"; resumes++ {
		if resumes > 20 {
			t.Fatalf("the fast reader got %d frames in %d connections, ending %q, want the whole run", len(full), resumes, full[len(full)-1])
		}
		var hdr []string
		if len(full) > 0 {
			hdr = []string{"Last-Event-ID", frameID(full[len(full)-1])}
		}
		fast := uiDo(t, timeout(t, 30*time.Second), "GET", gw[1]+"/v1/ui/chat/chat-4/stream", key, "", hdr...)
		full = append(full, sseFrames(t, fast.Body, -1)...)
		fast.Body.Close()
	}
	got := append(head, sseFrames(t, br, -1)...)
	t.Logf("the slow reader got %d frames of %d before its end", len(got), len(full))
	if len(got) < len(full) {
		// Let go behind the window: the rest comes with a resume.
		rest := uiDo(t, timeout(t, 30*time.Second), "GET", gw[1]+"/v1/ui/chat/chat-4/stream", key, "", "Last-Event-ID", frameID(got[len(got)-1]))
		got = append(got, sseFrames(t, rest.Body, -1)...)
		rest.Body.Close()
	}
	for i := range min(len(got), len(full)) {
		if got[i] != full[i] {
			t.Errorf("frame %d: got %q, want %q", i, got[i], full[i])
			break
		}
	}
	if strings.Join(got, "") != strings.Join(full, "") {
		t.Errorf("the slow reader got %d frames in all, want the run's %d, byte for byte", len(got), len(full))
	}
}

// A resume takes the run from the Store a page at a time, and the frames of a page leave
// together: far fewer flushes than frames, byte for byte the frames a live reader got.
func TestUIResumeFlushesByPage(t *testing.T) {
	rs := redistest.Start(t)
	srvs, gw := uiFleet(t, rs)
	_, key := createKey(t, gw[0], admin, `{"name":"ui"}`)
	r := uiDo(t, timeout(t, 30*time.Second), "POST", gw[0]+"/v1/ui/chat", key, uiBody("chat-5", "long", "hi"))
	full := sseFrames(t, r.Body, -1)
	r.Body.Close()
	if len(full) < 1000 || frameData(full[len(full)-1]) != "[DONE]" {
		t.Fatalf("the run: got %d frames, want the whole long run", len(full))
	}
	// The run's end reaches Redis with its last write, just after its reader saw it.
	var rec *flushLog
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rec = &flushLog{h: http.Header{}, signal: make(chan struct{}, 1)}
		req := httptest.NewRequest("GET", "/v1/ui/chat/chat-5/stream", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Last-Event-ID", frameID(full[0]))
		srvs[1].ServeHTTP(rec, req)
		if strings.HasSuffix(rec.body.String(), "data: [DONE]\n\n") || time.Now().After(deadline) {
			break
		}
	}
	if got, want := rec.body.String(), strings.Join(full[1:], ""); got != want {
		t.Fatalf("the resume got %d bytes, want the %d of the run after its first frame", len(got), len(want))
	}
	t.Logf("the resume of %d frames took %d flushes", len(full)-1, len(rec.flushed))
	if n := len(rec.flushed); n > len(full)/16 {
		t.Errorf("the resume of %d frames took %d flushes, want one per page of the Store (256 frames) or so", len(full)-1, n)
	}
}

// Redis down under on_failure: closed: a frontend run is refused, and so is its resume, with
// 503 redis_unavailable in the runs' wording. The run log's failure reaches the handlers as
// an llm.Unavailable error (redisstore's errors are llm kinds), not as a 500.
func TestUIRedisDownClosed(t *testing.T) {
	srv := redistest.Start(t)
	yaml := simConfig + "redis: {url: \"${REDIS_URL}\", timeout: 1s, on_failure: closed}\n"
	url, _ := serveServer(t, yaml, map[string]string{"REDIS_URL": srv.URL}, time.Hour, nil)
	srv.Stop(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/ui/chat", uiBody("chat-down", "default", "Hello.")},
		{"GET", "/v1/ui/chat/chat-down/stream", ""},
	} {
		r := do(t, c.method, url+c.path, "", c.body)
		if r.status != 503 || r.errCode() != "redis_unavailable" || !strings.Contains(string(r.body), "where runs are kept") {
			t.Errorf("%s %s: got %d %s, want 503 redis_unavailable about the runs", c.method, c.path, r.status, r.body)
		}
	}
}
