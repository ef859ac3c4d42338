package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
)

// guardConfig attaches guardrails to aliases of the mock's echo script, which answers the
// last user message: a test chooses the answer by its prompt.
const guardConfig = `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  resp: {kind: openai, api: responses, base_url: "${MOCK_URL}/v1", api_key: test}
guardrails:
  terms-out:  {stage: output, kind: terms, terms: [condor]}
  terms-live: {stage: output, kind: terms, terms: [condor], mode: stream}
  terms-in:   {stage: input, kind: terms, terms: [topsecret]}
  pii-mask:   {stage: input, kind: pii, action: mask}
  pii-block:  {stage: input, kind: pii}
  json:       {stage: output, kind: json_schema}
models:
  plain: [mock/echo]
  held: {targets: [mock/echo], guardrails: [terms-out]}
  held-resp: {targets: [resp/echo], guardrails: [terms-out]}
  live: {targets: [mock/echo], guardrails: [terms-live]}
  blocked: {targets: ["mock/echo?first=1ms"], guardrails: [terms-in]}
  masked: {targets: ["mock/echo?first=2ms"], guardrails: [pii-mask]}
  json: {targets: [mock/echo], guardrails: [json]}
`

func say(model, text string, stream bool, extra string) string {
	b, _ := json.Marshal(text)
	s := `{"model":` + quote(model) + `,"messages":[{"role":"user","content":` + string(b) + `}]`
	if stream {
		s += `,"stream":true`
	}
	return s + extra + "}"
}

// post sends body to path with the request id "test" and reads the whole answer.
func post(t *testing.T, url, path, body string) reply {
	t.Helper()
	resp := postTo(t, url, path, body)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

var createdAt = regexp.MustCompile(`"created(_at)?":\d+`)

// A hold output guardrail never lets refused text reach the client: the answer is exactly
// the 422 error body, byte for byte, on Chat Completions and Responses, streamed or not. An
// answer it passes is the very stream an unguarded alias sends.
func TestGuardHoldNeverLeaks(t *testing.T) {
	g := newGateway(t, guardConfig)
	refused := `{"error":{"message":"The answer was refused by guardrail 'terms-out': the answer contains a blocked term.",` +
		`"type":"invalid_request_error","param":null,"code":"guardrail_refused"}}`
	for _, tt := range []struct{ name, path, body string }{
		{"chat streamed", "/v1/chat/completions", say("held", "the Condor flies at dawn", true, "")},
		{"chat", "/v1/chat/completions", say("held", "the Condor flies at dawn", false, "")},
		{"responses streamed", "/v1/responses", `{"model":"held-resp","input":"the Condor flies at dawn","stream":true}`},
		{"responses", "/v1/responses", `{"model":"held-resp","input":"the Condor flies at dawn"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, g.url, tt.path, tt.body)
			if r.status != 422 || string(r.body) != refused {
				t.Fatalf("got %d %q, want 422 and exactly %q", r.status, r.body, refused)
			}
			if r.header.Get("X-Should-Retry") != "false" || r.header.Get("Content-Type") != "application/json" ||
				r.header.Get("X-Sluice-Cost-Usd") == "" {
				t.Errorf("got headers %v, want x-should-retry false, JSON, and the cost", r.header)
			}
		})
	}
	for _, tt := range []struct{ name, path, held, plain string }{
		{"chat", "/v1/chat/completions", say("held", "the eagle flies at dawn", true, `,"stream_options":{"include_usage":true}`),
			say("plain", "the eagle flies at dawn", true, `,"stream_options":{"include_usage":true}`)},
		{"responses", "/v1/responses", `{"model":"held-resp","input":"the eagle flies","stream":true}`,
			`{"model":"resp/echo","input":"the eagle flies","stream":true}`},
	} {
		t.Run(tt.name+" passed", func(t *testing.T) {
			held, plain := post(t, g.url, tt.path, tt.held), post(t, g.url, tt.path, tt.plain)
			norm := func(b []byte) string {
				s := createdAt.ReplaceAllString(string(b), `"created":0`)
				return strings.ReplaceAll(s, `"model":"held-resp"`, `"model":"resp/echo"`) // the client's model, echoed
			}
			if held.status != 200 || norm(held.body) != norm(plain.body) {
				t.Errorf("got %d\n%s\nwant the unguarded stream\n%s", held.status, held.body, plain.body)
			}
			if held.header.Get("Content-Type") != "text/event-stream" || held.header.Get("X-Sluice-Cost-Usd") == "" {
				t.Errorf("got headers %v, want an event stream carrying its cost (it was complete before they left)", held.header)
			}
		})
	}
}

// A held round that outlasts a heartbeat has sent the headers with a keepalive: the
// refusal is then the in-band error frame, and still no byte of the answer.
func TestGuardHoldAfterKeepalive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := config.Parse([]byte(`heartbeat_interval: 10s
providers: {sim: {kind: sim}}
guardrails: {terms-out: {stage: output, kind: terms, terms: [condor]}}
models:
  slow: {targets: ["sim/text?first=25s&len=60&say=+condor+"], guardrails: [terms-out]}
`), "hold.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		rec := serve(s, "slow")
		body := strings.ReplaceAll(rec.body.String(), ": keepalive\n\n", "")
		want := `data: {"error":{"message":"The answer was refused by guardrail 'terms-out': the answer contains a blocked term.",` +
			`"type":"invalid_request_error","param":null,"code":"guardrail_refused"}}` + "\n\n"
		if rec.status != 200 || !strings.HasPrefix(rec.body.String(), ": keepalive\n\n") || body != want {
			t.Errorf("got %d %q, want keepalives then exactly %q", rec.status, rec.body.String(), want)
		}
	})
}

// A stream guardrail lets the text through as it comes and ends the stream with the
// refusal frame: no [DONE] on Chat Completions; error then response.failed on Responses.
func TestGuardStreamMode(t *testing.T) {
	g := newGateway(t, guardConfig+"  live-resp: {targets: [resp/echo], guardrails: [terms-live]}\n")
	r := post(t, g.url, "/v1/chat/completions", say("live", "the condor flies", true, ""))
	p := parse(t, frames(t, bytes.NewReader(r.body)))
	if r.status != 200 || p.text[0] != "the condor flies" || p.done || p.err == nil || p.err.Error.Code != "guardrail_refused" ||
		!strings.Contains(p.err.Error.Message, "guardrail 'terms-live'") {
		t.Errorf("chat: got %d %s, want the text, then the guardrail_refused frame and no [DONE]", r.status, r.body)
	}
	r = post(t, g.url, "/v1/responses", `{"model":"live-resp","input":"the condor flies","stream":true}`)
	b := string(r.body)
	i, j := strings.Index(b, "event: error\n"), strings.Index(b, "event: response.failed\n")
	if r.status != 200 || !strings.Contains(b, `"delta":"the condor flies"`) && !strings.Contains(b, `"delta":"condor `) ||
		i < 0 || j < i || !strings.Contains(b[i:j], `"code":"guardrail_refused"`) || strings.Contains(b, "response.completed") {
		t.Errorf("responses: got %d %s, want the text, then error guardrail_refused and response.failed", r.status, b)
	}
	// Not streamed, the client has seen nothing: a plain 422.
	if r := post(t, g.url, "/v1/chat/completions", say("live", "the condor flies", false, "")); r.status != 422 {
		t.Errorf("not streamed: got %d %s, want 422", r.status, r.body)
	}
}

// An input guardrail blocks before any provider is called: 400 guardrail_blocked, and the
// mock sees no request. One in mode mask sends the prompt masked.
func TestGuardInput(t *testing.T) {
	g := newGateway(t, guardConfig)
	for _, tt := range []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", say("blocked", "the TopSecret plans", false, "")},
		{"chat streamed", "/v1/chat/completions", say("blocked", "the topsecret plans", true, "")},
		{"responses", "/v1/responses", `{"model":"blocked","input":"the topsecret plans","stream":true}`},
	} {
		r := post(t, g.url, tt.path, tt.body)
		if r.status != 400 || r.errCode() != "guardrail_blocked" || r.header.Get("X-Should-Retry") != "false" ||
			!strings.Contains(string(r.body), "blocked by guardrail 'terms-in': the prompt contains a blocked term") {
			t.Errorf("%s: got %d %s %v, want 400 guardrail_blocked naming terms-in", tt.name, r.status, r.body, r.header)
		}
	}
	if n := g.mock.Calls("echo?first=1ms"); n != 0 {
		t.Errorf("got %d upstream calls, want 0: a blocked request is never sent", n)
	}
	r := post(t, g.url, "/v1/chat/completions", say("masked", "mail jane.doe@example.com today", false, ""))
	var c struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(r.body, &c); err != nil || r.status != 200 || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != "mail [REDACTED:email] today" {
		t.Errorf("mask: got %d %s, want the prompt masked before the provider saw it", r.status, r.body)
	}
	if up := string(g.mock.LastRequest("echo?first=2ms")); up == "" || strings.Contains(up, "jane") {
		t.Errorf("mask: the upstream got %s, want no email", up)
	}
}

// A key's guardrails apply to every alias it calls, after the alias's own.
func TestGuardOfKey(t *testing.T) {
	secret := auth.NewSecret()
	g := newGateway(t, guardConfig+"keys: [{name: careful, hash: "+auth.Hash(secret)+", guardrails: [pii-block, terms-out]}]\n")
	call := func(model, text string) reply {
		req, _ := http.NewRequest("POST", g.url+"/v1/chat/completions", strings.NewReader(say(model, text, false, "")))
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return reply{status: resp.StatusCode, header: resp.Header, body: b}
	}
	if r := call("plain", "call +1 415 555 0100"); r.status != 400 || !strings.Contains(string(r.body), "'pii-block': the prompt contains personal data (phone)") {
		t.Errorf("pii: got %d %s, want 400 from the key's pii-block", r.status, r.body)
	}
	if r := call("plain", "a condor"); r.status != 422 || r.errCode() != "guardrail_refused" {
		t.Errorf("terms: got %d %s, want 422 from the key's terms-out", r.status, r.body)
	}
	if r := call("plain", "an eagle"); r.status != 200 {
		t.Errorf("clean: got %d %s, want 200", r.status, r.body)
	}
}

// A JSON Schema guardrail refuses invalid JSON and answers that miss the response_format's
// schema; json_object wants an object.
func TestGuardJSONSchema(t *testing.T) {
	g := newGateway(t, guardConfig)
	schema := `,"response_format":{"type":"json_schema","json_schema":{"name":"person","strict":true,"schema":` +
		`{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer"}}}}}`
	object := `,"response_format":{"type":"json_object"}`
	for _, tt := range []struct {
		name, answer, format string
		stream               bool
		reason               string // "" for a pass
	}{
		{"valid", `{"name":"Ada","age":36}`, schema, false, ""},
		{"valid streamed", `{"name":"Ada","age":36}`, schema, true, ""},
		{"not JSON", `Sure! Here it is: {"name":"Ada"`, schema, false, "the answer is not valid JSON"},
		{"not JSON streamed", `{"name":"Ada",`, schema, true, "the answer is not valid JSON"},
		{"missing member", `{"name":"Ada"}`, schema, false, "the answer does not match the JSON schema at #/required"},
		{"wrong type", `{"name":"Ada","age":"old"}`, schema, true, "the answer does not match the JSON schema at #/properties/age/type"},
		{"json_object", `[1, 2]`, object, false, "the answer is not a JSON object"},
		{"text asked", `plain words`, "", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, g.url, "/v1/chat/completions", say("json", tt.answer, tt.stream, tt.format))
			switch {
			case tt.reason == "" && (r.status != 200 || !strings.Contains(string(r.body), "Ada") && !strings.Contains(string(r.body), "plain")):
				t.Errorf("got %d %s, want 200 and the answer", r.status, r.body)
			case tt.reason != "" && (r.status != 422 || !strings.Contains(string(r.body), "guardrail 'json': "+tt.reason)):
				t.Errorf("got %d %s, want 422 %q", r.status, r.body, tt.reason)
			case tt.reason != "" && strings.Contains(string(r.body), "Ada"):
				t.Errorf("got %s: the refused answer leaked", r.body)
			}
		})
	}
}
