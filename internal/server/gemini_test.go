package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/sluice-gw/sluice/internal/auth"
)

// geminiGateway serves the Gemini wire's aliases from the mock, over a Chat and an
// Anthropic upstream.
func geminiGateway(t *testing.T) *gateway {
	return anthropicMock(t, `
  g-text: ["mock/text?len=40"]
  g-tools: ["mock/tools?calls=2"]
  g-cut: ["mock/text?len=40&fail=error&after=6"]
  g-echo: [mock/echo]
  g-anth: ["anth/text?len=40"]
  g-think: ["anth/reason?think=30&len=20"]
  gemini-*: [mock/echo]
`)
}

const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"Hello there, gateway."}]}]}`

func postGemini(t *testing.T, g *gateway, path, body string) (*http.Response, string) {
	t.Helper()
	resp := postTo(t, g.url, path, body)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestGeminiStreamGolden: the streamGenerateContent?alt=sse stream a Gemini client gets,
// byte for byte, from a Chat and an Anthropic upstream: text, function calls, thoughts asked
// for, and a failure after commit (an error body as the last event, no finishReason chunk).
func TestGeminiStreamGolden(t *testing.T) {
	g := geminiGateway(t)
	think := `{"contents":[{"role":"user","parts":[{"text":"Hello there, gateway."}]}],` +
		`"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}}`
	for _, c := range []struct{ model, body string }{
		{"g-text", geminiBody}, {"g-tools", geminiBody}, {"g-cut", geminiBody}, {"g-anth", geminiBody}, {"g-think", think},
	} {
		t.Run(c.model, func(t *testing.T) {
			resp, body := postGemini(t, g, "/v1beta/models/"+c.model+":streamGenerateContent?alt=sse", c.body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("got %d %v %s, want a 200 event stream", resp.StatusCode, resp.Header, body)
			}
			for _, ev := range strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n") {
				data, ok := strings.CutPrefix(strings.TrimLeft(ev, "\r\n"), "data: ")
				if !ok || !json.Valid([]byte(data)) {
					t.Errorf("event %q is not data: JSON", ev)
				}
			}
			golden(t, "gemini-"+c.model+".sse", []byte(body))
		})
	}
}

// TestGeminiArrayStream: without alt=sse the stream is one JSON array, written element by
// element; a failure after commit is its last element.
func TestGeminiArrayStream(t *testing.T) {
	g := geminiGateway(t)
	for _, model := range []string{"g-text", "g-cut"} {
		t.Run(model, func(t *testing.T) {
			resp, body := postGemini(t, g, "/v1beta/models/"+model+":streamGenerateContent", geminiBody)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
				t.Fatalf("got %d %s %s, want 200 and JSON, as Google serves the array", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			var chunks []map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &chunks); err != nil || len(chunks) < 2 {
				t.Fatalf("got %q (%v), want a JSON array of chunks", body, err)
			}
			last := chunks[len(chunks)-1]
			if _, failed := last["error"]; failed != (model == "g-cut") {
				t.Errorf("last element %s: want an error element only for g-cut", mustJSON(last))
			}
			golden(t, "gemini-"+model+".json-stream", []byte(body))
		})
	}
}

// TestGeminiOnce: the generateContent answer, under /v1beta and /v1 (the @google/genai SDK's
// path, beside the OpenAI GET /v1/models/{id}, which still lists).
func TestGeminiOnce(t *testing.T) {
	g := geminiGateway(t)
	for _, c := range []struct{ path, golden string }{
		{"/v1beta/models/g-text:generateContent", "gemini-g-text.json"},
		{"/v1/models/g-tools:generateContent", "gemini-g-tools.json"},
		{"/v1beta/models/g-think:generateContent", "gemini-g-think.json"},
	} {
		t.Run(c.path, func(t *testing.T) {
			resp, body := postGemini(t, g, c.path, geminiBody)
			if resp.StatusCode != 200 {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			golden(t, c.golden, []byte(body))
		})
	}
	resp, err := http.Get(g.url + "/v1/models/g-text")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /v1/models/g-text: got %d, want the OpenAI model", resp.StatusCode)
	}
}

// TestGeminiToolRound: a second turn hands the call and its result back: the functionCall
// without an id (as the Gemini API writes them) and its functionResponse by name reach a
// Chat upstream as a call and its tool message.
func TestGeminiToolRound(t *testing.T) {
	g := geminiGateway(t)
	body := `{"contents":[{"role":"user","parts":[{"text":"weather?"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]},` +
		`{"role":"user","parts":[{"text":"And so?"}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}],` +
		`"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`
	resp, got := postGemini(t, g, "/v1beta/models/g-echo:generateContent", body)
	if resp.StatusCode != 200 || !strings.Contains(got, `"text":"And so?"`) {
		t.Fatalf("got %d %s, want the echo of the last text", resp.StatusCode, got)
	}
	req := string(g.mock.LastRequest("echo"))
	for _, want := range []string{`"tool_call_id":"gemini_call_0"`, `"id":"gemini_call_0"`, `{\"temp\":21}`, `"type":"string"`} {
		if !strings.Contains(req, want) {
			t.Errorf("upstream request %s: no %s", req, want)
		}
	}
}

// TestGeminiCountTokens: countTokens answers {"totalTokens": N} (the gateway's estimate: no
// target of a Chat alias counts), under both forms of its body.
func TestGeminiCountTokens(t *testing.T) {
	g := geminiGateway(t)
	for _, body := range []string{geminiBody, `{"generateContentRequest":{"model":"models/g-echo",` + geminiBody[1:] + `}`} {
		resp, got := postGemini(t, g, "/v1beta/models/g-echo:countTokens", body)
		var c struct{ TotalTokens int }
		if resp.StatusCode != 200 || json.Unmarshal([]byte(got), &c) != nil || c.TotalTokens < 1 {
			t.Errorf("%s: got %d %s, want {\"totalTokens\": N}", body, resp.StatusCode, got)
		}
	}
}

// TestGeminiBadInput: what the wire refuses is a Google-shaped 4xx, never a 5xx.
func TestGeminiBadInput(t *testing.T) {
	g := geminiGateway(t)
	for _, c := range []struct {
		name, path, body string
		status           int
		google           string
	}{
		{"no method", "/v1beta/models/g-text", geminiBody, 404, "NOT_FOUND"},
		{"wrong method", "/v1beta/models/g-text:embedContent", geminiBody, 404, "NOT_FOUND"},
		{"no model", "/v1beta/models/:generateContent", geminiBody, 404, "NOT_FOUND"},
		{"unknown model", "/v1beta/models/nothing:generateContent", geminiBody, 404, "NOT_FOUND"},
		{"unknown part", "/v1beta/models/g-text:generateContent", `{"contents":[{"role":"user","parts":[{"executableCode":{"code":"1"}}]}]}`, 400, "INVALID_ARGUMENT"},
		{"candidateCount 2", "/v1beta/models/g-text:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"candidateCount":2}}`, 400, "INVALID_ARGUMENT"},
		{"malformed JSON", "/v1beta/models/g-text:generateContent", `{"contents":[`, 400, "INVALID_ARGUMENT"},
		{"wrong type", "/v1beta/models/g-text:generateContent", `{"contents":"hi"}`, 400, "INVALID_ARGUMENT"},
		{"bad role", "/v1beta/models/g-text:streamGenerateContent?alt=sse", `{"contents":[{"role":"system","parts":[{"text":"hi"}]}]}`, 400, "INVALID_ARGUMENT"},
		// A PDF now crosses to a Chat target (a file part); ogg audio has no Chat equivalent.
		{"ogg audio", "/v1beta/models/g-text:generateContent", `{"contents":[{"parts":[{"inlineData":{"mimeType":"audio/ogg","data":"AAAA"}}]}]}`, 400, "INVALID_ARGUMENT"},
		{"bad base64", "/v1beta/models/g-text:generateContent", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"%%%"}}]}]}`, 400, "INVALID_ARGUMENT"},
		{"hosted tool", "/v1beta/models/g-text:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"googleSearch":{}}]}`, 400, "INVALID_ARGUMENT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := postGemini(t, g, c.path, c.body)
			var e struct {
				Error struct {
					Code    int
					Message string
					Status  string
				}
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != c.status || e.Error.Code != c.status ||
				e.Error.Status != c.google || e.Error.Message == "" {
				t.Errorf("got %d %s, want %d %s in Google's shape", resp.StatusCode, body, c.status, c.google)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGeminiOpenAPI: the spec has the wire's paths, and real answers (a non-streamed one, a
// chunk of a stream, a refusal) validate against its schemas.
func TestGeminiOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	for _, p := range []string{"/v1beta/models/{model}:generateContent", "/v1beta/models/{model}:streamGenerateContent",
		"/v1beta/models/{model}:countTokens", "/v1/models/{model}:generateContent"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("got no path %s, want one", p)
		}
	}
	g := geminiGateway(t)
	check := func(schema, body string) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if err := doc.Components.Schemas[schema].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: got %s, the spec rejects it: %v", schema, body, err)
		}
	}
	_, body := postGemini(t, g, "/v1beta/models/g-tools:generateContent", geminiBody)
	check("GeminiGenerateContentResponse", body)
	_, body = postGemini(t, g, "/v1beta/models/g-text:streamGenerateContent", geminiBody)
	var chunks []json.RawMessage
	if err := json.Unmarshal([]byte(body), &chunks); err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		check("GeminiGenerateContentResponse", string(c))
	}
	_, body = postGemini(t, g, "/v1beta/models/g-text:generateContent", `{"contents":[]}`)
	check("GeminiErrorResponse", body)
	check("GeminiGenerateContentRequest", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"candidateCount":1}}`)
}

// TestGeminiKey: with keys on, the wire takes its key as Google's SDKs send it
// (x-goog-api-key), as ?key=, or as a Bearer token; none is a Google-shaped 401.
func TestGeminiKey(t *testing.T) {
	good := auth.NewSecret()
	url, _ := serveServer(t, `
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
auth: {admin_token: admin-`+good+`}
keys:
  - {name: team-a, hash: `+auth.Hash(good)+`, models: [default]}
`, nil, time.Minute, nil)
	path := url + "/v1beta/models/default:generateContent"
	for _, c := range []struct {
		name   string
		set    func(*http.Request)
		status int
	}{
		{"x-goog-api-key", func(r *http.Request) { r.Header.Set("x-goog-api-key", good) }, 200},
		{"query", func(r *http.Request) { r.URL.RawQuery = "key=" + good }, 200},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+good) }, 200},
		{"none", func(*http.Request) {}, 401},
		{"wrong", func(r *http.Request) { r.Header.Set("x-goog-api-key", "sk-wrong") }, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", path, strings.NewReader(geminiBody))
			c.set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || c.status == 401 && (!strings.Contains(string(b), `"UNAUTHENTICATED"`) || !strings.Contains(string(b), "x-goog-api-key")) {
				t.Errorf("got %d %s, want %d", resp.StatusCode, b, c.status)
			}
		})
	}
}

// TestGeminiToGemini: a Gemini client through the gateway to a Gemini upstream (a fake that
// replays the adapter's stream of two parallel calls, the first with its thoughtSignature): the
// client gets the calls with their signature on the same part, and when it hands the turn
// back the upstream sees the signature where it put it, and no made-up ids.
func TestGeminiToGemini(t *testing.T) {
	chunks, err := os.ReadFile("../provider/gemini/testdata/gemini-parallel-tool-calls.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	up, sent := geminiUpstream(t, strings.Split(strings.TrimSpace(string(chunks)), "\n"))
	gs := serveConfig(t, `
providers:
  g: {kind: gemini, api_key: k, base_url: "${URL}"}
models:
  flash: [g/gemini-2.5-flash]
`, map[string]string{"URL": up})
	t.Cleanup(gs.Close)
	g := &gateway{url: gs.URL}
	resp, body := postGemini(t, g, "/v1beta/models/flash:generateContent", geminiBody)
	var r struct {
		Candidates []struct {
			Content json.RawMessage
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil || len(r.Candidates) != 1 {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	want := `{"role":"model","parts":[{"text":"Checking both cities."},` +
		`{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQBVKhc7sig-paris"},` +
		`{"functionCall":{"name":"get_weather","args":{"city":"Tokyo"}}}]}`
	if got := string(r.Candidates[0].Content); got != want {
		t.Fatalf("content:\ngot  %s\nwant %s", got, want)
	}
	next := `{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},` + want + `,` +
		`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"t":21}}},` +
		`{"functionResponse":{"name":"get_weather","response":{"t":30}}}]}]}`
	if resp, body := postGemini(t, g, "/v1beta/models/flash:streamGenerateContent?alt=sse", next); resp.StatusCode != 200 {
		t.Fatalf("second turn: got %d %s", resp.StatusCode, body)
	}
	_, body = sent()
	last := []byte(body)
	var got struct {
		Contents []struct {
			Role  string
			Parts []map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(last, &got); err != nil || len(got.Contents) != 3 {
		t.Fatalf("upstream got %s", last)
	}
	model := got.Contents[1].Parts
	if len(model) != 3 || string(model[1]["thoughtSignature"]) != `"CiQBVKhc7sig-paris"` || model[2]["thoughtSignature"] != nil ||
		strings.Contains(string(last), SyntheticPrefix) {
		t.Errorf("upstream got %s, want the signature on the Paris call and no made-up id", last)
	}
}

// SyntheticPrefix is the gateway's own call ids' prefix, never sent to Gemini.
const SyntheticPrefix = "gemini_call_"

// TestGeminiModelList: GET /v1beta/models lists in Google's shape, and GET
// /v1beta/models/{model} describes one (an alias, a pattern alias's match, a direct target);
// an unknown one is Google's 404. GET /v1/models and /v1/models/{id} stay OpenAI's.
func TestGeminiModelList(t *testing.T) {
	g := geminiGateway(t)
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1beta/models", 200, `{"models":[{"name":"models/`},
		{"/v1/models", 200, `{"object":"list","data":[`},
		{"/v1beta/models/g-text", 200, `{"name":"models/g-text","displayName":"g-text","supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"]}`},
		{"/v1beta/models/gemini-2.5-pro", 200, `{"name":"models/gemini-2.5-pro",`},
		{"/v1beta/models/mock/echo", 200, `{"name":"models/mock/echo",`},
		{"/v1beta/models/nothing", 404, `{"error":{"code":404,`},
		{"/v1/models/g-text", 200, `{"id":"g-text","object":"model"`},
	} {
		resp, err := http.Get(g.url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.HasPrefix(string(b), c.want) {
			t.Errorf("GET %s: got %d %s, want %d %s...", c.path, resp.StatusCode, b, c.status, c.want)
		}
		if c.status == 404 && !strings.Contains(string(b), `"status":"NOT_FOUND"`) {
			t.Errorf("GET %s: got %s, want Google's NOT_FOUND", c.path, b)
		}
	}
}

// TestGeminiOversized: an inlineData over limits.max_body_bytes is Google's 413
// INVALID_ARGUMENT, never a 5xx.
func TestGeminiOversized(t *testing.T) {
	gs := serveConfig(t, `
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
limits: {max_body_bytes: 4096}
`, nil)
	t.Cleanup(gs.Close)
	big := strings.Repeat("A", 8192)
	body := `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"` + big + `"}}]}]}`
	resp, got := postGemini(t, &gateway{url: gs.URL}, "/v1beta/models/default:generateContent", body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(got, `"status":"INVALID_ARGUMENT"`) {
		t.Errorf("got %d %s, want 413 in Google's shape", resp.StatusCode, got)
	}
}

// TestGeminiKeepalive: while the upstream is slow the stream's heartbeat is a bare CRLF,
// which leaves both framings whole: the JSON array still parses, and the SSE events are
// still data: lines.
func TestGeminiKeepalive(t *testing.T) {
	g := anthropicMock(t, `
  g-slow: ["mock/text?len=20&first=120ms&delay=60ms"]
heartbeat_interval: 20ms
`)
	resp, body := postGemini(t, g, "/v1beta/models/g-slow:streamGenerateContent", geminiBody)
	var chunks []json.RawMessage
	if !strings.HasPrefix(body, "\r\n") || json.Unmarshal([]byte(body), &chunks) != nil || len(chunks) < 2 {
		t.Errorf("array: got %q, want keepalives before a whole JSON array", body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("array: got Content-Type %q from the keepalive's headers, want JSON", ct)
	}
	_, body = postGemini(t, g, "/v1beta/models/g-slow:streamGenerateContent?alt=sse", geminiBody)
	n := 0
	for _, ev := range strings.Split(body, "\r\n\r\n") {
		if ev = strings.TrimSpace(ev); ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || !json.Valid([]byte(data)) {
			t.Errorf("sse: event %q is not data: JSON", ev)
		}
		n++
	}
	if !strings.HasPrefix(body, "\r\n") || n < 2 {
		t.Errorf("sse: got %q, want keepalives and events", body)
	}
}
