package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/sluice-gw/sluice/internal/logstore"
	"go.uber.org/goleak"
)

// heldUpstream is OpenAI's Realtime endpoint holding each response: at response.create it
// sends response.created, then response.done only once release is closed (never, when
// release is nil).
func heldUpstream(t *testing.T, release chan struct{}) *httptest.Server {
	return newRTUpstreamWith(t, func(ctx context.Context, c *websocket.Conn) error {
		go func() { // the reads go on: the gateway's close is read
			if release == nil {
				return
			}
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.done","response":{"id":"r1","status":"completed","usage":{"total_tokens":10,"input_tokens":4,"output_tokens":6}}}`))
		}()
		return c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"r1"}}`))
	}).srv
}

// The gateway's shutdown (Server.Close) drains each Realtime session: a new one is refused
// with 503; one in the middle of a response gets its response.done, then a close 1001
// (going away); one between responses, or whose response outlasts realtime.drain_timeout,
// is closed with 1001 at once, or at the timeout. Each session's usage and turns are in its
// record, written before the log closed; no goroutine is left.
func TestRealtimeShutdownDrains(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) }) // last: after every other cleanup
	release := make(chan struct{})
	busy, stuck := heldUpstream(t, release), heldUpstream(t, nil)
	db := filepath.Join(t.TempDir(), "logs.db")
	// The timeout runs from Close; the test dials until it sees the refusal before it lets the
	// busy response end, which took more than 300 ms on a loaded machine (CI runs packages
	// in parallel on two cores): 2 s, the stuck session's wait.
	srv := buildConfig(t, `logs: {url: "sqlite://`+db+`"}
realtime: {drain_timeout: 2s}
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: k1}
  st: {kind: openai, base_url: "${STUCK}/v1", api_key: k2}
models:
  voice: [oa/gpt-realtime]
  stuck: [st/gpt-realtime]
`, map[string]string{"UP": busy.URL, "STUCK": stuck.URL}, io.Discard)
	hs := listen(srv)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// open dials a session of model and reads its session.created; ask: and its response
	// under way.
	open := func(model string, ask bool) (*websocket.Conn, string) {
		c, resp, err := rtDial(ctx, hs.URL, model, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		if ev, err := rtRead(ctx, c); err != nil || ev.Type != "session.created" {
			t.Fatalf("got %+v, %v; want session.created", ev, err)
		}
		if ask {
			rtSend(ctx, t, c, `{"type":"response.create"}`)
			if ev, err := rtRead(ctx, c); err != nil || ev.Type != "response.created" {
				t.Fatalf("got %+v, %v; want response.created", ev, err)
			}
		}
		return c, resp.Header.Get("X-Sluice-Record-Id")
	}
	working, workingID := open("voice", true)
	idle, idleID := open("voice", false)
	late, lateID := open("stuck", true)

	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	// The drain has begun once a new session is refused; then the response under way ends.
	for {
		_, resp, err := rtDial(ctx, hs.URL, "voice", nil)
		if err == nil {
			t.Fatal("a session opened during the drain")
		}
		if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("no refusal seen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)

	// ends reads c up to its close: the events' types, and the close.
	ends := func(c *websocket.Conn) ([]string, websocket.CloseError) {
		var types []string
		for {
			ev, err := rtRead(ctx, c)
			if err != nil {
				var ce websocket.CloseError
				errors.As(err, &ce)
				return types, ce
			}
			types = append(types, ev.Type)
		}
	}
	if types, ce := ends(working); strings.Join(types, " ") != "response.done" || ce.Code != websocket.StatusGoingAway || ce.Reason == "" {
		t.Errorf("busy session: got %v then the close %d %q, want response.done then 1001 with a reason", types, ce.Code, ce.Reason)
	}
	for name, c := range map[string]*websocket.Conn{"idle": idle, "late": late} {
		if types, ce := ends(c); len(types) != 0 || ce.Code != websocket.StatusGoingAway {
			t.Errorf("%s session: got %v then the close %d %q, want 1001 at once", name, types, ce.Code, ce.Reason)
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("close: %v", err)
	}

	// The records were written before the log closed.
	st, err := logstore.Open(ctx, logstore.Options{URL: "sqlite://" + db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, want := range map[string]int{workingID: 1, idleID: 0, lateID: 0} {
		rec, err := st.Get(ctx, id)
		if err != nil || rec == nil {
			t.Errorf("record %s: %v, want it written", id, err)
			continue
		}
		if len(rec.Turns) != want || rec.Status != http.StatusSwitchingProtocols || rec.Kind != "" || rec.Wire != "realtime" {
			t.Errorf("record %s: got %d turns, status %d, kind %q; want %d turns, 101, served", id, len(rec.Turns), rec.Status, rec.Kind, want)
		}
		if want == 1 && (rec.TokensIn != 4 || rec.TokensOut != 6 || rec.Turns[0].TokensOut != 6) {
			t.Errorf("record %s: got %d/%d tokens, turns %+v; want the response's 4/6 charged", id, rec.TokensIn, rec.TokensOut, rec.Turns)
		}
	}
}

// realtime.max_message bounds a client event: one under it reaches the upstream, a larger
// one closes the session with 1009 (message too big). realtime.ping_interval is the
// client's ping: a client that stops reading (and so answering pings) is gone within two
// intervals, and its upstream closed.
func TestRealtimeLimitsConfig(t *testing.T) {
	up := newRTUpstream(t, nil)
	url := serveGate(t, `realtime: {max_message: 1KiB, ping_interval: 1s}
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: k1}
models:
  voice: [oa/gpt-realtime]
`, map[string]string{"UP": up.srv.URL}, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "voice", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if ev, err := rtRead(ctx, c); err != nil || ev.Type != "session.created" {
		t.Fatalf("got %+v, %v; want session.created", ev, err)
	}
	pad := func(n int) string {
		return `{"type":"input_audio_buffer.append","audio":"` + strings.Repeat("A", n) + `"}`
	}
	rtSend(ctx, t, c, pad(900))
	rtSend(ctx, t, c, pad(2000))
	_, err = rtRead(ctx, c)
	if code := websocket.CloseStatus(err); code != websocket.StatusMessageTooBig {
		t.Errorf("got %v (close %d), want 1009 for the event past 1KiB", err, code)
	}

	quiet, _, err := rtDial(ctx, url, "voice", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.CloseNow()
	<-up.closed // the first session's upstream
	select {    // nothing is read from quiet: its pings go unanswered
	case <-up.closed:
	case <-ctx.Done():
		t.Fatal("a client that answers no ping still holds its session")
	}
}
