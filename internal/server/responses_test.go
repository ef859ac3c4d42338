package server_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The Responses stream wire, byte for byte, for the cases that matter, served by the Chat
// Completions mock behind the gateway (any adapter serves /v1/responses).
func TestResponsesStreamGoldens(t *testing.T) {
	tests := []struct {
		name, model string
		last        string // the terminal event
		check       func(t *testing.T, a *assembled)
	}{
		{"text", "mock/text?len=40&chunk=2w", "response.completed", func(t *testing.T, a *assembled) {
			if len(a.text) != 40 {
				t.Errorf("got text %q, want 40 bytes", a.text)
			}
		}},
		{"function-call", "mock/tools?calls=2&say=Checking.&split=1,5,9", "response.completed", func(t *testing.T, a *assembled) {
			if a.text != "Checking." || len(a.args) != 2 {
				t.Fatalf("got text %q and %d argument deltas, want the text and one delta per call", a.text, len(a.args))
			}
			for _, s := range a.args {
				if !json.Valid([]byte(s)) {
					t.Errorf("got arguments %q, want whole JSON in one delta", s)
				}
			}
		}},
		{"reasoning", "mock/reason?think=20&len=12", "response.completed", func(t *testing.T, a *assembled) {
			if len(a.summary) != 20 || len(a.text) != 12 {
				t.Errorf("got summary %q text %q, want 20 and 12 bytes", a.summary, a.text)
			}
		}},
		{"refusal", "mock/refuse", "response.completed", func(t *testing.T, a *assembled) {
			if a.refusal != "I'm sorry, but I can't help with that." || a.text != "" {
				t.Errorf("got refusal %q text %q, want the refusal only", a.refusal, a.text)
			}
		}},
		{"length", "mock/text?len=20&finish=length", "response.incomplete", func(t *testing.T, a *assembled) {
			d, _ := a.final["incomplete_details"].(map[string]any)
			if d["reason"] != "max_output_tokens" {
				t.Errorf("got incomplete_details %v, want max_output_tokens", a.final["incomplete_details"])
			}
		}},
		{"failure-after-text", "mock/text?len=40&fail=error&after=3", "response.failed", func(t *testing.T, a *assembled) {
			if a.text == "" || a.err == nil {
				t.Fatalf("got text %q error %v, want text then an error event", a.text, a.err)
			}
			e := a.err.data
			nested, _ := e["error"].(map[string]any)
			// Both shapes (DESIGN §5): flat code/message, and the nested error object.
			if e["code"] != "server_error" || nested["code"] != "server_error" || nested["type"] != "server_error" ||
				e["message"] != nested["message"] || !strings.Contains(a.err.str("message"), "failed after the answer started") {
				t.Errorf("got error event %v, want both shapes naming the failure", e)
			}
			if v, ok := e["param"]; !ok || v != nil {
				t.Errorf("got param %v, want null", v)
			}
			if fe, _ := a.final["error"].(map[string]any); fe["code"] != "server_error" || a.final["status"] != "failed" {
				t.Errorf("got response %v, want status failed with the error", a.final)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t, "") // its own mock: upstream ids count the mock's requests
			resp := postTo(t, g.url, "/v1/responses", respBody(tt.model, true, ""))
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
				resp.Header.Get("X-Sluice-Target") != tt.model || resp.Header.Get("X-Request-Id") != "test" {
				t.Fatalf("got %d %v, want a 200 event stream served by %s", resp.StatusCode, resp.Header, tt.model)
			}
			evs, raw := respStream(t, resp.Body)
			golden(t, "responses-"+tt.name+".want.sse", createdAtRE.ReplaceAll([]byte(raw), []byte(`"created_at":0`)))
			if len(evs) < 3 || evs[0].typ != "response.created" || evs[1].typ != "response.in_progress" {
				t.Fatalf("got %d events, want response.created and response.in_progress first", len(evs))
			}
			a := assemble(evs)
			if a.last != tt.last {
				t.Fatalf("got terminal event %q, want %q", a.last, tt.last)
			}
			if a.final["id"] != "resp_test" || a.final["object"] != "response" || a.final["model"] != strings.TrimPrefix(tt.model, "mock/") {
				t.Errorf("got response id %v object %v model %v, want resp_test, response and the served model", a.final["id"], a.final["object"], a.final["model"])
			}
			if tt.last != "response.failed" {
				checkOutputMatches(t, a)
			}
			tt.check(t, a)
		})
	}
}

// checkOutputMatches checks that the final Response's output holds what the deltas said.
func checkOutputMatches(t *testing.T, a *assembled) {
	t.Helper()
	var text, refusal string
	var args []string
	out, _ := a.final["output"].([]any)
	for _, o := range out {
		it := o.(map[string]any)
		switch it["type"] {
		case "message":
			for _, p := range it["content"].([]any) {
				p := p.(map[string]any)
				if s, ok := p["text"].(string); ok {
					text += s
				}
				if s, ok := p["refusal"].(string); ok {
					refusal += s
				}
			}
		case "function_call":
			args = append(args, it["arguments"].(string))
			if it["call_id"] == "" || !strings.HasPrefix(it["id"].(string), "fc_") || it["status"] != "completed" {
				t.Errorf("got function_call %v, want call_id, an fc_ id and completed", it)
			}
		}
	}
	if text != a.text || refusal != a.refusal || strings.Join(args, "|") != strings.Join(a.args, "|") {
		t.Errorf("got output text %q refusal %q args %v, want what the deltas said: %q %q %v", text, refusal, args, a.text, a.refusal, a.args)
	}
	u, _ := a.final["usage"].(map[string]any)
	if u == nil || u["total_tokens"].(float64) == 0 || u["input_tokens_details"] == nil || u["output_tokens_details"] == nil {
		t.Errorf("got usage %v, want tokens with their details", a.final["usage"])
	}
}

func TestResponsesNonStreamed(t *testing.T) {
	g := newGateway(t, "")
	resp := postTo(t, g.url, "/v1/responses", respBody("mock/tools?calls=1&say=Checking.", false,
		`,"instructions":"Be brief.","temperature":0.5,"metadata":{"k":"v"},"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],"tool_choice":"auto"`))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		resp.Header.Get("X-Sluice-Target") == "" || resp.Header.Get("X-Sluice-Attempts") != "1" {
		t.Fatalf("got %d %v %s, want a JSON Response", resp.StatusCode, resp.Header, b)
	}
	golden(t, "responses-once.want.json", createdAtRE.ReplaceAll(b, []byte(`"created_at":0`)))
	var r struct {
		ID, Object, Status, Model, Instructions string
		Temperature                             float64
		Metadata                                map[string]string
		Tools                                   []map[string]any
		Output                                  []struct {
			Type, ID, Status, Role, Name, Arguments string
			CallID                                  string `json:"call_id"`
			Content                                 []struct{ Type, Text string }
		}
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
			TotalTokens  int `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "resp_test" || r.Object != "response" || r.Status != "completed" || r.Model != "tools?calls=1&say=Checking." {
		t.Errorf("got %s, want a completed response of the served model", b)
	}
	if r.Instructions != "Be brief." || r.Temperature != 0.5 || r.Metadata["k"] != "v" || len(r.Tools) != 1 {
		t.Errorf("got %s, want the request's fields echoed", b)
	}
	if len(r.Output) != 2 || r.Output[0].Type != "message" || r.Output[0].Content[0].Text != "Checking." ||
		r.Output[1].Type != "function_call" || r.Output[1].Name != "get_weather" || !json.Valid([]byte(r.Output[1].Arguments)) {
		t.Errorf("got output %+v, want the message then the function call", r.Output)
	}
	if r.Usage.TotalTokens == 0 || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Errorf("got usage %+v, want tokens that add up", r.Usage)
	}
	// The instructions reached the upstream as a system message, ahead of the input.
	up := string(g.mock.LastRequest("tools?calls=1&say=Checking."))
	if !strings.Contains(up, `{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there, gateway."}`) {
		t.Errorf("got upstream request %s, want the instructions first", up)
	}
}

func TestResponsesErrorsBeforeFirstByte(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"malformed", `{"model":`, 400, ""},
		{"unknown model", respBody("nope", true, ""), 404, "model_not_found"},
		{"upstream 500 streamed", respBody("mock/text?fail=500", true, ""), 502, "all_targets_failed"},
		{"error frame before text", respBody("mock/text?fail=error", true, ""), 502, "all_targets_failed"},
		{"upstream 429", respBody("mock/text?fail=429&retry=3", true, ""), 429, "rate_limit_exceeded"},
		{"upstream 400", respBody("mock/text?fail=400&msg=bad+thing", false, ""), 400, ""},
		{"non-streamed failure after text", respBody("mock/text?len=40&fail=error&after=3", false, ""), 502, "all_targets_failed"},
	}
	g := newGateway(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postTo(t, g.url, "/v1/responses", tt.body)
			b, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct {
					Message, Type string
					Code          *string
				}
			}
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
				json.Unmarshal(b, &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("got %d %s, want %d with an OpenAI error body", resp.StatusCode, b, tt.status)
			}
			if tt.code != "" && (e.Error.Code == nil || *e.Error.Code != tt.code) {
				t.Errorf("got code %v, want %s", e.Error.Code, tt.code)
			}
		})
	}
	t.Run("body too large", func(t *testing.T) {
		g := newGateway(t, baseConfig+"limits: {max_body_bytes: 1000}\n")
		resp := postTo(t, g.url, "/v1/responses", respBody("default", false, `,"user":"`+strings.Repeat("x", 2000)+`"`))
		if resp.StatusCode != 413 {
			t.Errorf("got status %d, want 413", resp.StatusCode)
		}
	})
}

// Redaction, the think filter and input redaction apply per alias, as for chat.
func TestResponsesAliasPolicies(t *testing.T) {
	key := "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	g := newGateway(t, baseConfig+`  private:
    targets: [mock/echo]
    redact_input: true
  thinker:
    targets: ["mock/text?say=%3Cthink%3Eplan%3C%2Fthink%3EAnswer.&chunk=2"]
    think_filter: true
  leaky:
    targets: ["mock/text?say=`+key+`&len=60&chunk=3"]
`)
	resp := postTo(t, g.url, "/v1/responses", `{"model":"private","input":"my key is `+key+` ok"}`)
	b, _ := io.ReadAll(resp.Body)
	if up := string(g.mock.LastRequest("echo")); strings.Contains(up, key) || strings.Contains(string(b), key) {
		t.Errorf("the provider saw %s and the client %s, want the key masked before it left", up, b)
	}
	evs, _ := respStream(t, postTo(t, g.url, "/v1/responses", respBody("thinker", true, "")).Body)
	if a := assemble(evs); a.text != "Answer." || a.summary != "plan" {
		t.Errorf("got text %q reasoning %q, want the think span moved to reasoning", a.text, a.summary)
	}
	evs, raw := respStream(t, postTo(t, g.url, "/v1/responses", respBody("leaky", true, "")).Body)
	// The key is in the target's name (the mock's script), so only the text is checked.
	if a := assemble(evs); strings.Contains(a.text, "Xq7Rt2") || strings.Count(raw, "Xq7Rt2") != strings.Count(raw, `"model":`) ||
		!strings.Contains(a.text, "[REDACTED:openai_key]") {
		t.Errorf("got text %q, want the key masked in the stream", a.text)
	}
}
