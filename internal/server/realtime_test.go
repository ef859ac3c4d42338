package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/sluice-gw/sluice/internal/auth"
)

// rtEvent is a Realtime event as the tests read it.
type rtEvent struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
	Text  string `json:"text"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Response struct {
		Usage struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"response"`
	raw string
}

// rtDial opens a Realtime session at the gateway url for model, with the headers h and the
// subprotocols protos.
func rtDial(ctx context.Context, url, model string, h http.Header, protos ...string) (*websocket.Conn, *http.Response, error) {
	return websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/v1/realtime?model="+model,
		&websocket.DialOptions{HTTPHeader: h, Subprotocols: protos})
}

func rtSend(ctx context.Context, t *testing.T, c *websocket.Conn, ev string) {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(ev)); err != nil {
		t.Fatalf("write %s: %v", ev, err)
	}
}

// rtRead reads the next event; the error is the session's end.
func rtRead(ctx context.Context, c *websocket.Conn) (rtEvent, error) {
	_, b, err := c.Read(ctx)
	if err != nil {
		return rtEvent{}, err
	}
	var ev rtEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return rtEvent{}, err
	}
	ev.raw = string(b)
	return ev, nil
}

// rtTurn asks for one response echoing text and reads up to its response.done: the deltas'
// text, and the events read.
func rtTurn(ctx context.Context, t *testing.T, c *websocket.Conn, text string) (string, []rtEvent, error) {
	t.Helper()
	item, _ := json.Marshal(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
		"content": []map[string]string{{"type": "input_text", "text": text}}}})
	rtSend(ctx, t, c, string(item))
	rtSend(ctx, t, c, `{"type":"response.create"}`)
	var got strings.Builder
	var evs []rtEvent
	for {
		ev, err := rtRead(ctx, c)
		if err != nil {
			return got.String(), evs, err
		}
		evs = append(evs, ev)
		switch ev.Type {
		case "response.output_text.delta", "response.text.delta":
			got.WriteString(ev.Delta)
		case "response.done":
			return got.String(), evs, nil
		}
	}
}

// The embedded default's sim answers a session that echoes, whole, through the gateway;
// the client's normal close ends it (issue 48).
func TestRealtimeEchoSim(t *testing.T) {
	url := serveGate(t, simConfig, nil, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if ev, err := rtRead(ctx, c); err != nil || ev.Type != "session.created" {
		t.Fatalf("got %+v, %v; want session.created first", ev, err)
	}
	for _, text := range []string{"Hello, realtime gateway.", "a second turn, héllo"} {
		got, evs, err := rtTurn(ctx, t, c, text)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if got != text || last.Response.Usage.Output == 0 {
			t.Errorf("got the deltas %q and %s, want %q echoed and the usage", got, last.raw, text)
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close: %v", err)
	}
}

// The key travels in the openai-insecure-api-key subprotocol (browsers) or as a bearer; a
// bad key, a missing model and a request that is no upgrade are refused before the upgrade,
// as HTTP answers in OpenAI's shape.
func TestRealtimeKeys(t *testing.T) {
	secret := auth.NewSecret()
	url := serveGate(t, simConfig+"keys: [{name: web, hash: "+auth.Hash(secret)+", models: [default]}]\n", nil, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, _, err := rtDial(ctx, url, "default", nil, "realtime", "openai-insecure-api-key."+secret, "openai-beta.realtime-v1")
	if err != nil {
		t.Fatalf("subprotocol key: %v", err)
	}
	if c.Subprotocol() != "realtime" {
		t.Errorf("got the subprotocol %q, want realtime (never the one carrying the key)", c.Subprotocol())
	}
	got, _, err := rtTurn(ctx, t, c, "browser")
	if err != nil || got != "browser" {
		t.Errorf("got %q, %v; want the echo", got, err)
	}
	c.Close(websocket.StatusNormalClosure, "")

	c, _, err = rtDial(ctx, url, "default", http.Header{"Authorization": {"Bearer " + secret}})
	if err != nil {
		t.Fatalf("bearer key: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")

	for _, tc := range []struct {
		name, model string
		h           http.Header
		protos      []string
		status      int
		code        string
	}{
		{"bad key", "default", nil, []string{"realtime", "openai-insecure-api-key.sk-wrong"}, 401, "invalid_api_key"},
		{"no key", "default", nil, nil, 401, "invalid_api_key"},
		{"model not allowed", "fast", http.Header{"Authorization": {"Bearer " + secret}}, nil, 403, "model_not_allowed"},
		{"unknown model", "nope", http.Header{"Authorization": {"Bearer " + secret}}, nil, 404, "model_not_found"},
		{"no model", "", http.Header{"Authorization": {"Bearer " + secret}}, nil, 400, "missing_required_parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := rtDial(ctx, url, tc.model, tc.h, tc.protos...)
			if err == nil {
				c.CloseNow()
				t.Fatal("upgraded, want a refusal")
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("got %v, want %d", resp, tc.status)
			}
			body, _ := io.ReadAll(resp.Body)
			if code := errCodeOf(body); code != tc.code || strings.Contains(string(body), secret) {
				t.Errorf("got %s, want the code %s in OpenAI's shape", body, tc.code)
			}
		})
	}
	r := do(t, "GET", url+"/v1/realtime?model=default", secret, "")
	if r.status != http.StatusUpgradeRequired || r.errCode() != "upgrade_required" {
		t.Errorf("a plain GET: got %d %s, want 426 upgrade_required", r.status, r.body)
	}
}

// errCodeOf is the code of an OpenAI error body.
func errCodeOf(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

// rtUpstream is OpenAI's Realtime endpoint: it records what the gateway dialed, sends
// session.created, then for each response.create the events script says; closed says when
// a session's connection was gone (the client's side closed it).
type rtUpstream struct {
	srv    *httptest.Server
	mu     sync.Mutex
	auth   []string
	models []string
	urls   []string
	closed chan struct{}
}

func newRTUpstream(t *testing.T, script []string) *rtUpstream {
	return newRTUpstreamWith(t, func(ctx context.Context, c *websocket.Conn) error {
		for _, ev := range script {
			if err := c.Write(ctx, websocket.MessageText, []byte(ev)); err != nil {
				return err
			}
		}
		return nil
	})
}

// newRTUpstreamWith is newRTUpstream answering each response.create with answer (an error
// ends the session).
func newRTUpstreamWith(t *testing.T, answer func(ctx context.Context, c *websocket.Conn) error) *rtUpstream {
	u := &rtUpstream{closed: make(chan struct{}, 16)}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth, u.models = append(u.auth, r.Header.Get("Authorization")+r.Header.Get("Api-Key")), append(u.models, r.URL.Query().Get("model"))
		u.urls = append(u.urls, r.URL.String())
		u.mu.Unlock()
		if !strings.HasSuffix(r.URL.Path, "/realtime") {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"session.created","session":{"id":"sess_up"}}`))
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				u.closed <- struct{}{}
				return
			}
			if strings.Contains(string(b), `"response.create"`) && answer(ctx, c) != nil {
				return
			}
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// A secret the upstream splits across deltas reaches the client masked, in the deltas and
// in the events that carry the whole text; the upstream gets the provider's key and the
// target's model, never the client's key.
func TestRealtimeSecretAcrossDeltas(t *testing.T) {
	const key = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	ids := `"response_id":"r1","item_id":"i1","output_index":0,"content_index":0`
	up := newRTUpstream(t, []string{
		`{"type":"response.created","response":{"id":"r1"}}`,
		`{"type":"response.output_text.delta",` + ids + `,"delta":"the key is ` + key[:6] + `"}`,
		`{"type":"response.output_text.delta",` + ids + `,"delta":"` + key[6:20] + `"}`,
		`{"type":"response.output_text.delta",` + ids + `,"delta":"` + key[20:] + ` ok"}`,
		`{"type":"response.output_text.done",` + ids + `,"text":"the key is ` + key + ` ok"}`,
		`{"type":"response.done","response":{"id":"r1","status":"completed","output":[{"id":"i1","type":"message","content":[{"type":"text","text":"the key is ` +
			key + ` ok"}]}],"usage":{"total_tokens":20,"input_tokens":8,"output_tokens":12}}}`,
	})
	secret := auth.NewSecret()
	url := serveGate(t, `
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: sk-upstream-key-of-the-gateway}
models:
  voice: [oa/gpt-realtime]
keys: [{name: app, hash: `+auth.Hash(secret)+`}]
`, map[string]string{"UP": up.srv.URL}, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "voice", http.Header{"Authorization": {"Bearer " + secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	got, evs, err := rtTurn(ctx, t, c, "tell me")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, ev := range evs {
		all.WriteString(ev.raw + "\n")
	}
	if got != "the key is [REDACTED:openai_key] ok" || strings.Contains(all.String(), key[6:20]) ||
		strings.Count(all.String(), "[REDACTED:openai_key]") != 3 {
		t.Errorf("got the deltas %q and the events\n%s\nwant the key masked in the deltas, the .done and the response.done", got, all.String())
	}
	c.Close(websocket.StatusNormalClosure, "")
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.auth) != 1 || up.auth[0] != "Bearer sk-upstream-key-of-the-gateway" || up.models[0] != "gpt-realtime" {
		t.Errorf("the upstream got %q for the models %q, want the gateway's key for gpt-realtime", up.auth, up.models)
	}
}

// A client that leaves without a close ends the upstream's session too.
func TestRealtimeClientLeaves(t *testing.T) {
	up := newRTUpstream(t, nil)
	url := serveGate(t, `
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: k}
models:
  voice: [oa/gpt-realtime]
`, map[string]string{"UP": up.srv.URL}, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "voice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := rtRead(ctx, c); err != nil || ev.Type != "session.created" {
		t.Fatalf("got %+v, %v; want the upstream's session.created", ev, err)
	}
	c.CloseNow()
	select {
	case <-up.closed:
	case <-ctx.Done():
		t.Fatal("the upstream's session is still open after its client left")
	}
}

// A key whose budget runs out mid-session gets an error event, then a close (1008), after
// the turn that spent it; the turns are charged to its account as they end.
func TestRealtimeBudgetMidSession(t *testing.T) {
	secret := auth.NewSecret()
	// 0.001 USD an answer token: a session reserves 512 of them (0.512 USD) at connect; each
	// turn echoes 2000 bytes, 500 tokens (0.5 USD). With 1.5 USD, the fourth turn's end finds
	// the budget spent (the third's reserved the rest).
	url := serveGate(t, simConfig+`prices: {sim/echo: {input: 0, output: 1000}}
auth: {admin_token: `+admin+`}
keys: [{name: talker, hash: `+auth.Hash(secret)+`, budget: {daily_usd: 1.5}}]
`, nil, time.Hour, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "default", http.Header{"Authorization": {"Bearer " + secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	text := strings.Repeat("abcd", 500)
	turns := 0
	var endErr error
	for turns < 10 {
		_, _, err := rtTurn(ctx, t, c, text)
		if err != nil {
			endErr = err
			break
		}
		turns++
		if turns == 4 {
			ev, err := rtRead(ctx, c)
			if err != nil || ev.Type != "error" || ev.Error.Code != "budget_exceeded" {
				t.Fatalf("after the 4th turn got %+v, %v; want the error event budget_exceeded", ev, err)
			}
			_, endErr = rtRead(ctx, c)
			break
		}
	}
	if turns != 4 || websocket.CloseStatus(endErr) != websocket.StatusPolicyViolation {
		t.Fatalf("got %d turns then %v, want 4 turns, then a close 1008", turns, endErr)
	}
	if r := do(t, "GET", url+"/v1/realtime?model=default", secret, "", "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="); r.status != 429 || r.errCode() != "budget_exceeded" {
		t.Errorf("a new session: got %d %s, want 429 budget_exceeded before the upgrade", r.status, r.body)
	}
	id := "cfg_" + auth.Hash(secret)[:16]
	_, total := usageReport(t, url, "key="+id)
	for deadline := time.Now().Add(10 * time.Second); total.Requests < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, total = usageReport(t, url, "key="+id) // the session settles once its handler returned, after the close
	}
	if total.CostUSD != 2 || total.Requests != 2 || total.OutputTokens != 2000 {
		t.Errorf("got %+v, want a session of 2 USD (4 turns of 0.5 USD, 500 tokens) and a refused one", total)
	}
}

// 200 sessions at once each get their echo.
func TestRealtimeConcurrent(t *testing.T) {
	url := serveGate(t, simConfig, nil, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ok atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			c, _, err := rtDial(ctx, url, "default", nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.CloseNow()
			text := strings.Repeat("x", i%50+1)
			item, _ := json.Marshal(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
				"content": []map[string]string{{"type": "input_text", "text": text}}}})
			if c.Write(ctx, websocket.MessageText, item) != nil || c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create"}`)) != nil {
				errs <- errors.New("write failed")
				return
			}
			var got strings.Builder
			for {
				ev, err := rtRead(ctx, c)
				if err != nil {
					errs <- err
					return
				}
				if ev.Type == "response.output_text.delta" {
					got.WriteString(ev.Delta)
				}
				if ev.Type == "response.done" {
					break
				}
			}
			if got.String() == text && c.Close(websocket.StatusNormalClosure, "") == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := ok.Load(); n != 200 {
		t.Errorf("got %d sessions echoed, want 200", n)
	}
}

// A target that refuses the handshake falls back to the next before the upgrade; the session
// is one record of the request log: its wire, the attempts (the refused one, the session's,
// then one per turn) and the turns' usage summed.
func TestRealtimeFallbackAndLog(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	t.Cleanup(refusing.Close)
	up := newRTUpstream(t, []string{
		`{"type":"response.created","response":{"id":"r1"}}`,
		`{"type":"response.output_text.delta","item_id":"i1","content_index":0,"delta":"hi"}`,
		`{"type":"response.output_text.done","item_id":"i1","content_index":0,"text":"hi"}`,
		`{"type":"response.done","response":{"id":"r1","status":"completed","usage":{"total_tokens":20,"input_tokens":8,"output_tokens":12}}}`,
	})
	secret := auth.NewSecret()
	url := serveGate(t, sqliteLogs(t, "")+`keys: [{name: app, hash: `+auth.Hash(secret)+`}]
providers:
  bad: {kind: openai, base_url: "${BAD}/v1", api_key: k1}
  oa: {kind: openai, base_url: "${UP}/v1", api_key: k2}
models:
  voice: [bad/gpt-realtime, oa/gpt-realtime]
`, map[string]string{"UP": up.srv.URL, "BAD": refusing.URL}, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, resp, err := rtDial(ctx, url, "voice", http.Header{"Authorization": {"Bearer " + secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if resp.Header.Get("X-Sluice-Record-Id") == "" {
		t.Fatal("no X-Sluice-Record-Id on the upgrade")
	}
	for range 2 {
		if got, _, err := rtTurn(ctx, t, c, "x"); err != nil || got != "hi" {
			t.Fatalf("got %q, %v; want the upstream's turn", got, err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	rec := waitRecord(t, url, resp.Header.Get("X-Sluice-Record-Id"))
	if rec.Wire != "realtime" || rec.Target != "oa/gpt-realtime" || rec.Alias != "voice" || rec.Status != 101 || rec.TokensIn != 16 || rec.Kind != "" {
		t.Errorf("got the record %+v, want the session on oa/gpt-realtime, 16 tokens in", rec)
	}
	var tries []string
	for _, a := range rec.Attempts {
		tries = append(tries, a.Target+":"+a.Kind)
	}
	if want := "bad/gpt-realtime:unavailable oa/gpt-realtime:"; strings.Join(tries, " ") != want {
		t.Errorf("got the attempts %q, want %q: the refused dial, the session's connect", strings.Join(tries, " "), want)
	}
	if len(rec.Turns) != 2 || rec.Turns[0].TokensIn != 8 || rec.Turns[1].TokensOut != 12 || rec.Turns[1].AtMS < rec.Turns[0].AtMS {
		t.Errorf("got the turns %+v, want two of 8 tokens in and 12 out, in order", rec.Turns)
	}
}

// With no provider key, the embedded default (make run) answers a Realtime session with
// sim's echo.
func TestRealtimeEmbeddedDefault(t *testing.T) {
	url := defaultGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := rtDial(ctx, url, "gpt-realtime", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if got, _, err := rtTurn(ctx, t, c, "hello from make run"); err != nil || got != "hello from make run" {
		t.Errorf("got %q, %v; want the echo", got, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// Azure OpenAI's Realtime: the v1 API's /openai/v1/realtime?model=, and with deployment URLs
// /openai/realtime?api-version=...&deployment=, the key in api-key.
func TestRealtimeAzure(t *testing.T) {
	up := newRTUpstream(t, nil)
	url := serveGate(t, `
providers:
  az: {kind: azure, base_url: "${UP}", api_key: az-key}
  azdep: {kind: azure, base_url: "${UP}", api_key: az-key, deployments: true, api_version: "2024-10-21"}
models:
  v1: [az/gpt-realtime]
  dep: [azdep/my-realtime]
`, map[string]string{"UP": up.srv.URL}, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, model := range []string{"v1", "dep"} {
		c, _, err := rtDial(ctx, url, model, nil)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if ev, err := rtRead(ctx, c); err != nil || ev.Type != "session.created" {
			t.Errorf("%s: got %+v, %v; want the upstream's session.created", model, ev, err)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	want := []string{"/openai/v1/realtime?model=gpt-realtime", "/openai/realtime?api-version=2025-04-01-preview&deployment=my-realtime"}
	if len(up.urls) != 2 || up.urls[0] != want[0] || up.urls[1] != want[1] || up.auth[0] != "az-key" || up.auth[1] != "az-key" {
		t.Errorf("the upstream got %q with the keys %q, want %q with api-key", up.urls, up.auth, want)
	}
}

// The rate limits are checked at connect: a session is one request, its turns take none; the
// next session over the limit is a 429 before the upgrade, with the x-ratelimit headers.
func TestRealtimeRateLimit(t *testing.T) {
	secret := auth.NewSecret()
	url := serveGate(t, simConfig+"keys: [{name: k, hash: "+auth.Hash(secret)+", limits: {rpm: 1}}]\n", nil, time.Hour, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bearer := http.Header{"Authorization": {"Bearer " + secret}}
	c, resp, err := rtDial(ctx, url, "default", bearer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if resp.Header.Get("X-Ratelimit-Limit-Requests") != "1" {
		t.Errorf("got the headers %v, want x-ratelimit-limit-requests: 1 on the upgrade", resp.Header)
	}
	for i := range 3 {
		if got, _, err := rtTurn(ctx, t, c, "turn"); err != nil || got != "turn" {
			t.Fatalf("turn %d: got %q, %v; want the echo (a turn takes no request)", i, got, err)
		}
	}
	_, resp, err = rtDial(ctx, url, "default", bearer)
	if err == nil || resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second session: got %v, %v; want 429 with Retry-After before the upgrade", resp, err)
	} else if body, _ := io.ReadAll(resp.Body); errCodeOf(body) != "rate_limit_exceeded" {
		t.Errorf("got %s, want rate_limit_exceeded", body)
	}
	c.Close(websocket.StatusNormalClosure, "")
}
