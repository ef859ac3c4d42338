package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

const specPath = "../../api/openapi.yaml"

// loadSpec loads api/openapi.yaml and validates it as an OpenAPI document.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(specPath)
	if err != nil {
		t.Fatalf("loading %s: %v", specPath, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", specPath, err)
	}
	return doc
}

// specCheck validates real exchanges with one gateway against the document.
type specCheck struct {
	doc    *openapi3.T
	router routers.Router
	url    string
}

func newSpecCheck(t *testing.T, g *gateway) *specCheck {
	t.Helper()
	doc := loadSpec(t)
	doc.Servers = openapi3.Servers{{URL: g.url}}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &specCheck{doc: doc, router: r, url: g.url}
}

// exchange is one request and its whole response.
type exchange struct {
	req     *http.Request
	reqBody []byte
	resp    *http.Response
	body    []byte
}

// do sends one request with the header pairs given.
func (sc *specCheck) do(t *testing.T, method, path, body string, header ...string) *exchange {
	t.Helper()
	req, err := http.NewRequest(method, sc.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return sc.send(t, req, body)
}

// call sends one request with key as a Bearer token ("" for none) and the header pairs
// given, checks its status, and validates the request and the response against the document.
func (sc *specCheck) call(t *testing.T, method, path, key, body string, status int, header ...string) *exchange {
	t.Helper()
	req, _ := http.NewRequest(method, sc.url+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	x := sc.send(t, req, body)
	if x.resp.StatusCode != status {
		t.Fatalf("%s %s: got %d %s, want %d", method, path, x.resp.StatusCode, x.body, status)
	}
	if err := sc.validRequest(t, x); err != nil {
		t.Errorf("%s %s: got a request the spec rejects: %v", method, path, err)
	}
	sc.response(t, x)
	return x
}

// send sends req, whose body is body, and reads the whole response.
func (sc *specCheck) send(t *testing.T, req *http.Request, body string) *exchange {
	t.Helper()
	req.Header.Set("X-Request-Id", "test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return &exchange{req: req, reqBody: []byte(body), resp: resp, body: b}
}

// input is the validation input of x's request, with a fresh copy of its body.
func (sc *specCheck) input(t *testing.T, x *exchange) *openapi3filter.RequestValidationInput {
	t.Helper()
	req := x.req.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.reqBody))
	route, params, err := sc.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: no operation in the spec: %v", req.Method, req.URL.Path, err)
	}
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
}

// validRequest reports whether the spec accepts x's request.
func (sc *specCheck) validRequest(t *testing.T, x *exchange) error {
	t.Helper()
	return openapi3filter.ValidateRequest(context.Background(), sc.input(t, x))
}

// response validates x's status, headers and (unless it is an event stream) body.
func (sc *specCheck) response(t *testing.T, x *exchange) {
	t.Helper()
	in := sc.input(t, x)
	stream := strings.HasPrefix(x.resp.Header.Get("Content-Type"), "text/event-stream")
	err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 x.resp.StatusCode,
		Header:                 x.resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(x.body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: stream, MultiError: true},
	})
	if err != nil {
		t.Errorf("got a response the spec rejects (%d %s): %v", x.resp.StatusCode, x.body, err)
	}
	if stream {
		r := in.Route.Operation.Responses.Status(x.resp.StatusCode)
		if r == nil || r.Value.Content.Get(x.resp.Header.Get("Content-Type")) == nil {
			t.Errorf("got a %d event stream, want the spec to declare text/event-stream for it", x.resp.StatusCode)
		}
	}
}

// schema is a component schema of the document.
func (sc *specCheck) schema(t *testing.T, name string) *openapi3.Schema {
	t.Helper()
	ref := sc.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("got no schema component %s, want one", name)
	}
	return ref.Value
}

// stream validates every data line of an event stream against ChatCompletionChunk, or
// ChatCompletionStreamError for an error frame, and how the stream ends. It returns the
// decoded chunks.
func (sc *specCheck) stream(t *testing.T, x *exchange, wantError bool) []map[string]any {
	t.Helper()
	chunkSchema, errSchema := sc.schema(t, "ChatCompletionChunk"), sc.schema(t, "ChatCompletionStreamError")
	fs := frames(t, bytes.NewReader(x.body))
	if len(fs) == 0 {
		t.Fatalf("got an empty stream, want frames")
	}
	var chunks []map[string]any
	for i, f := range fs {
		last := i == len(fs)-1
		if f == "[DONE]" {
			if !last {
				t.Errorf("frame %d: got [DONE] before the end of the stream", i)
			}
			if wantError {
				t.Errorf("got [DONE], want the stream to end after the error frame without it")
			}
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(f), &v); err != nil {
			t.Fatalf("frame %d: got %s, want JSON: %v", i, f, err)
		}
		if _, ok := v["error"]; ok {
			if err := errSchema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("frame %d: got error frame %s, the spec rejects it: %v", i, f, err)
			}
			if !wantError {
				t.Errorf("frame %d: got error frame %s, want none", i, f)
			}
			if !last {
				t.Errorf("frame %d: got %d frames after the error frame, want none", i, len(fs)-1-i)
			}
			continue
		}
		if err := chunkSchema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("frame %d: got chunk %s, the spec rejects it: %v", i, f, err)
		}
		if last {
			t.Errorf("got last frame %s, want [DONE] or an error frame", f)
		}
		chunks = append(chunks, v)
	}
	if wantError && !strings.Contains(fs[len(fs)-1], `"error"`) {
		t.Errorf("got last frame %s, want the error frame", fs[len(fs)-1])
	}
	return chunks
}

func TestOpenAPIDocument(t *testing.T) {
	doc := loadSpec(t)
	if got := doc.OpenAPI; got != "3.1.0" {
		t.Errorf("got openapi %q, want 3.1.0", got)
	}
	for _, p := range []string{"/v1/chat/completions", "/v1/models", "/v1/models/{model}", "/healthz", "/readyz"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("got no path %s, want one", p)
		}
	}
	for _, s := range []string{"ChatCompletionRequest", "ChatCompletion", "ChatCompletionChunk", "ChatCompletionStreamError", "ErrorResponse"} {
		if doc.Components.Schemas[s] == nil {
			t.Errorf("got no schema %s, want one", s)
		}
	}
}

func TestOpenAPINonStreamed(t *testing.T) {
	g := newGateway(t, "")
	sc := newSpecCheck(t, g)
	full := `{"model":"mock/echo","messages":[` +
		`{"role":"system","content":"Be brief."},` +
		`{"role":"developer","content":[{"type":"text","text":"Use tools."}]},` +
		`{"role":"user","content":[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"18 degrees"},` +
		`{"role":"user","content":"Hello there, gateway."}],` +
		`"n":1,"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}},"strict":false}}],` +
		`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"response_format":{"type":"text"},` +
		`"stream":false,"stream_options":null,"max_tokens":100,"max_completion_tokens":100,"temperature":0.5,"top_p":1,` +
		`"stop":["\n\n"],"user":"u1","seed":7,"logprobs":false,"top_logprobs":0,"parallel_tool_calls":false,"metadata":{"k":"v"}}`
	tests := []struct {
		name, body string
		content    bool // content is a string
		toolCalls  int
		field      string // a message field that must be there
	}{
		{"text", chatBody("mock/text?len=60", false, ""), true, 0, ""},
		{"every modelled field", full, true, 0, ""},
		{"tool calls", chatBody("mock/tools?calls=2&say=Checking.", false, ""), true, 2, ""},
		{"tool calls only", chatBody("mock/tools?calls=1", false, ""), false, 1, ""},
		{"reasoning", chatBody("mock/reason?think=20&field=reasoning", false, ""), true, 0, "reasoning"},
		{"reasoning_content", chatBody("mock/reason?think=20", false, ""), true, 0, "reasoning_content"},
		{"refusal", chatBody("mock/refuse", false, ""), false, 0, "refusal"},
		{"logprobs", chatBody("mock/text?len=30&logprobs=1", false, `,"logprobs":true,"top_logprobs":2`), true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/chat/completions", tt.body)
			if err := sc.validRequest(t, x); err != nil {
				t.Errorf("got a request the spec rejects: %v", err)
			}
			if x.resp.StatusCode != 200 {
				t.Fatalf("got status %d (%s), want 200", x.resp.StatusCode, x.body)
			}
			if ct := x.resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("got Content-Type %q, want application/json", ct)
			}
			sc.response(t, x)
			var c struct {
				Choices []struct {
					Message map[string]json.RawMessage `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(x.body, &c); err != nil || len(c.Choices) != 1 {
				t.Fatalf("got %s, want one choice", x.body)
			}
			m := c.Choices[0].Message
			if got := string(m["content"]) != "null"; got != tt.content {
				t.Errorf("got content %s, want a string %v", m["content"], tt.content)
			}
			var calls []json.RawMessage
			_ = json.Unmarshal(m["tool_calls"], &calls)
			if len(calls) != tt.toolCalls {
				t.Errorf("got %d tool calls, want %d", len(calls), tt.toolCalls)
			}
			if tt.field != "" && m[tt.field] == nil {
				t.Errorf("got message %s, want the field %s", x.body, tt.field)
			}
		})
	}
}

func TestOpenAPIStreamed(t *testing.T) {
	g := newGateway(t, "")
	sc := newSpecCheck(t, g)
	tests := []struct {
		name, body string
		wantError  bool
		wantUsage  bool
		want       string // a delta field some chunk must carry
	}{
		{"text with usage", chatBody("mock/text?len=60", true, `,"stream_options":{"include_usage":true}`), false, true, "content"},
		{"text without usage", chatBody("mock/text?len=60", true, `,"stream_options":{"include_usage":false}`), false, false, "content"},
		{"tool calls", chatBody("mock/tools?calls=2", true, ""), false, false, "tool_calls"},
		{"text then tool calls", chatBody("mock/tools?calls=2&say=Checking.", true, `,"stream_options":{"include_usage":true}`), false, true, "tool_calls"},
		{"reasoning", chatBody("mock/reason?think=20&field=reasoning", true, ""), false, false, "reasoning"},
		{"reasoning_content", chatBody("mock/reason?think=20&field=reasoning_content", true, ""), false, false, "reasoning_content"},
		{"refusal", chatBody("mock/refuse", true, ""), false, false, "refusal"},
		{"logprobs", chatBody("mock/text?len=30&logprobs=1", true, `,"logprobs":true`), false, false, "content"},
		{"error after text", chatBody("mock/text?len=40&fail=error&after=3", true, ""), true, false, "content"},
		{"cut after text", chatBody("mock/text?len=40&fail=cut&after=3", true, ""), true, false, "content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/chat/completions", tt.body)
			if err := sc.validRequest(t, x); err != nil {
				t.Errorf("got a request the spec rejects: %v", err)
			}
			if x.resp.StatusCode != 200 {
				t.Fatalf("got status %d (%s), want 200", x.resp.StatusCode, x.body)
			}
			if ct := x.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("got Content-Type %q, want text/event-stream", ct)
			}
			sc.response(t, x)
			chunks := sc.stream(t, x, tt.wantError)
			usage, seen := 0, false
			for i, c := range chunks {
				if _, ok := c["usage"]; ok {
					usage++
					if ch, _ := c["choices"].([]any); len(ch) != 0 || i != len(chunks)-1 {
						t.Errorf("chunk %d: got usage with %d choices, at %d of %d, want it last with no choice", i, len(ch), i, len(chunks))
					}
				}
				for _, ch := range c["choices"].([]any) {
					if d, _ := ch.(map[string]any)["delta"].(map[string]any); d != nil && d[tt.want] != nil {
						seen = true
					}
				}
			}
			want := 0
			if tt.wantUsage {
				want = 1
			}
			if usage != want {
				t.Errorf("got %d usage chunks, want %d", usage, want)
			}
			if !seen {
				t.Errorf("got no delta with %s, want some", tt.want)
			}
		})
	}
}

func TestOpenAPIErrors(t *testing.T) {
	g := newGateway(t, "")
	sc := newSpecCheck(t, g)
	tests := []struct {
		name, body string
		status     int
	}{
		{"malformed JSON", `{"model":`, 400},
		{"not an object", `[1]`, 400},
		{"missing messages", `{"model":"default"}`, 400},
		{"unknown model", chatBody("nope", false, ""), 404},
		{"unknown model streamed", chatBody("nope", true, ""), 404},
		{"upstream 400", chatBody("mock/text?fail=400&msg=bad+thing", true, ""), 400},
		{"upstream 422", chatBody("mock/text?fail=422", false, ""), 422},
		{"upstream 429", chatBody("mock/text?fail=429", false, ""), 429},
		{"upstream 429 streamed", chatBody("mock/text?fail=429&seed=2", true, ""), 429},
		{"upstream 500", chatBody("mock/text?fail=500", false, ""), 502},
		{"upstream 500 streamed", chatBody("mock/text?fail=500", true, ""), 502},
		{"upstream 401", chatBody("mock/text?fail=401", true, ""), 502},
		{"error frame before text", chatBody("mock/text?fail=error", true, ""), 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/chat/completions", tt.body)
			if x.resp.StatusCode != tt.status {
				t.Fatalf("got status %d (%s), want %d", x.resp.StatusCode, x.body, tt.status)
			}
			sc.response(t, x)
		})
	}

	// The spec and the server agree on what is invalid: each of these is a 400 from the
	// server and a request the spec rejects.
	invalid := []struct{ name, extra string }{
		{"n out of range", `,"n":0`},
		{"n too large", `,"n":129`},
		{"temperature out of range", `,"temperature":3`},
		{"top_p out of range", `,"top_p":1.5`},
		{"max_tokens zero", `,"max_tokens":0`},
		{"top_logprobs out of range", `,"top_logprobs":21`},
		{"five stop sequences", `,"stop":["a","b","c","d","e"]`},
		{"stream not a boolean", `,"stream":"yes"`},
		{"unknown tool_choice", `,"tool_choice":"sometimes"`},
		{"unknown response_format", `,"response_format":{"type":"xml"}`},
		{"tool name", `,"tools":[{"type":"function","function":{"name":"a b"}}]`},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/chat/completions", chatBody("default", false, tt.extra))
			if x.resp.StatusCode != 400 {
				t.Errorf("got status %d (%s), want 400", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
			if err := sc.validRequest(t, x); err == nil {
				t.Errorf("got a request the spec accepts, want it rejected as the server does")
			}
		})
	}
	for _, tt := range []struct{ name, body string }{
		{"empty messages", `{"model":"default","messages":[]}`},
		{"image in a system message", `{"model":"default","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`},
		{"tool result without id", `{"model":"default","messages":[{"role":"tool","content":"18"}]}`},
		{"unknown role", `{"model":"default","messages":[{"role":"robot","content":"hi"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/chat/completions", tt.body)
			if x.resp.StatusCode != 400 {
				t.Errorf("got status %d (%s), want 400", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
			if err := sc.validRequest(t, x); err == nil {
				t.Errorf("got a request the spec accepts, want it rejected as the server does")
			}
		})
	}

	t.Run("body too large", func(t *testing.T) {
		g := newGateway(t, baseConfig+"limits: {max_body_bytes: 1000}\n")
		sc := newSpecCheck(t, g)
		x := sc.do(t, "POST", "/v1/chat/completions", chatBody("default", false, `,"user":"`+strings.Repeat("x", 2000)+`"`))
		if x.resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("got status %d (%s), want 413", x.resp.StatusCode, x.body)
		}
		sc.response(t, x)
	})
}

func TestOpenAPIModelsAndHealth(t *testing.T) {
	g := newGateway(t, baseConfig+"  fast: [mock/text]\n")
	sc := newSpecCheck(t, g)
	tests := []struct {
		name, path string
		status     int
	}{
		{"list", "/v1/models", 200},
		{"alias", "/v1/models/default", 200},
		{"unknown", "/v1/models/nope", 404},
		{"healthz", "/healthz", 200},
		{"readyz", "/readyz", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "GET", tt.path, "")
			if x.resp.StatusCode != tt.status {
				t.Fatalf("got status %d (%s), want %d", x.resp.StatusCode, x.body, tt.status)
			}
			if err := sc.validRequest(t, x); err != nil {
				t.Errorf("got a request the spec rejects: %v", err)
			}
			sc.response(t, x)
		})
	}
}
