package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestOpenAPIResponsesDocument(t *testing.T) {
	doc := loadSpec(t)
	for _, p := range []string{"/v1/responses", "/v1/embeddings"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("got no path %s, want one", p)
		}
	}
	for _, s := range []string{"ResponseRequest", "Response", "ResponseStreamEvent", "ResponseErrorEvent", "EmbeddingRequest", "EmbeddingList"} {
		if doc.Components.Schemas[s] == nil {
			t.Errorf("got no schema %s, want one", s)
		}
	}
}

// Real Responses exchanges with a gateway in front of the Chat Completions mock, checked
// against the document: requests, bodies, and every event of a stream.
func TestOpenAPIResponses(t *testing.T) {
	g := newGateway(t, "")
	sc := newSpecCheck(t, g)
	full := `{"model":"mock/echo","instructions":"Be brief.","input":[` +
		`{"role":"user","content":[{"type":"input_text","text":"What is this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}]},` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look."}],"encrypted_content":"gAAA"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},` +
		`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"18C"},` +
		`{"role":"user","content":"Hello there, gateway."}],` +
		`"tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object"},"strict":false}],` +
		`"tool_choice":{"type":"function","name":"get_weather"},"text":{"format":{"type":"text"}},"reasoning":{"effort":"low"},` +
		`"max_output_tokens":100,"temperature":0.5,"top_p":1,"metadata":{"k":"v"},"store":false,"include":["reasoning.encrypted_content"],` +
		`"user":"u1","parallel_tool_calls":false,"truncation":"disabled","stream":false}`
	bodies := []struct{ name, body string }{
		{"text", respBody("mock/text?len=60", false, "")},
		{"every field", full},
		{"function calls", respBody("mock/tools?calls=2&say=Checking.", false, "")},
		{"reasoning", respBody("mock/reason?think=20", false, "")},
		{"refusal", respBody("mock/refuse", false, "")},
		{"incomplete", respBody("mock/text?len=20&finish=length", false, "")},
		// Codex's request (without its hosted tool, which a Chat target cannot run), and a
		// custom tool's call back.
		{"codex", strings.NewReplacer(`"stream":true`, `"stream":false`, `{"type":"web_search","external_web_access":false},`, "").
			Replace(codexRequest(t, "mock/tools?name=apply_patch&args=%7B%22input%22%3A%22x%22%7D"))},
	}
	for _, tt := range bodies {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/responses", tt.body)
			if err := sc.validRequest(t, x); err != nil {
				t.Errorf("got a request the spec rejects: %v", err)
			}
			if x.resp.StatusCode != 200 {
				t.Fatalf("got status %d (%s), want 200", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
		})
	}
	event, errEvent := sc.schema(t, "ResponseStreamEvent"), sc.schema(t, "ResponseErrorEvent")
	streams := []struct{ name, model string }{
		{"text", "mock/text?len=60"},
		{"function calls", "mock/tools?calls=2&say=Checking."},
		{"reasoning", "mock/reason?think=20"},
		{"refusal", "mock/refuse"},
		{"incomplete", "mock/text?len=20&finish=length"},
		{"failure after text", "mock/text?len=40&fail=error&after=3"},
	}
	for _, tt := range streams {
		t.Run("stream "+tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/responses", respBody(tt.model, true, ""))
			if x.resp.StatusCode != 200 {
				t.Fatalf("got status %d (%s), want 200", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
			evs, _ := respStream(t, bytes.NewReader(x.body))
			for i, e := range evs {
				s := event
				if e.typ == "error" {
					s = errEvent
				}
				if err := s.VisitJSON(e.data, openapi3.EnableJSONSchema2020()); err != nil {
					t.Errorf("event %d (%s): the spec rejects it: %v", i, e.typ, err)
				}
			}
		})
	}
	errs := []struct {
		name, body string
		status     int
	}{
		{"unknown model", respBody("nope", true, ""), 404},
		{"upstream 500", respBody("mock/text?fail=500", true, ""), 502},
		{"upstream 429", respBody("mock/text?fail=429", false, ""), 429},
		{"no Responses upstream for previous_response_id", respBody("mock/echo", false, `,"previous_response_id":"resp_1"`), 400},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/responses", tt.body)
			if x.resp.StatusCode != tt.status {
				t.Fatalf("got status %d (%s), want %d", x.resp.StatusCode, x.body, tt.status)
			}
			sc.response(t, x)
		})
	}
	// The spec and the server agree on what is invalid.
	for _, tt := range []struct{ name, extra string }{
		{"temperature out of range", `,"temperature":3`},
		{"max_output_tokens zero", `,"max_output_tokens":0`},
		{"truncation", `,"truncation":"middle"`},
		{"background", `,"background":true`},
		{"tool_choice", `,"tool_choice":"sometimes"`},
		{"text format", `,"text":{"format":{"type":"xml"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/responses", respBody("default", false, tt.extra))
			if x.resp.StatusCode != 400 {
				t.Errorf("got status %d (%s), want 400", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
			if err := sc.validRequest(t, x); err == nil {
				t.Errorf("got a request the spec accepts, want it rejected as the server does")
			}
		})
	}
}

func TestOpenAPIEmbeddings(t *testing.T) {
	url := embedGateway(t, &embedUpstream{status: 500}, &embedUpstream{status: 200})
	sc := newSpecCheck(t, &gateway{url: url})
	tests := []struct {
		name, body string
		status     int
	}{
		{"fallback serves", `{"model":"embed","input":["a","b"],"encoding_format":"float","dimensions":2}`, 200},
		{"unknown model", `{"model":"nope","input":"a"}`, 404},
		{"missing input", `{"model":"embed"}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, "POST", "/v1/embeddings", tt.body)
			if x.resp.StatusCode != tt.status {
				t.Fatalf("got status %d (%s), want %d", x.resp.StatusCode, x.body, tt.status)
			}
			if err := sc.validRequest(t, x); (err == nil) != (tt.status != 400) {
				t.Errorf("got spec verdict %v on the request, want it to agree with the server's %d", err, tt.status)
			}
			sc.response(t, x)
		})
	}
}
