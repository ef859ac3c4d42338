package gemini

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
)

func input(param, alt string) dialect.Input {
	return dialect.Input{Op: dialect.Call, Header: func(string) string { return "" },
		Param: func(string) string { return param }, Query: func(n string) string {
			if n == "alt" {
				return alt
			}
			return ""
		}}
}

func TestPath(t *testing.T) {
	for _, c := range []struct {
		name, rest, model, method string
		status                    int
	}{
		{"generate", "gemini-2.5-flash:generateContent", "gemini-2.5-flash", generate, 0},
		{"provider model", "sim/echo:streamGenerateContent", "sim/echo", stream, 0},
		{"models prefix", "models/g:countTokens", "g", count, 0},
		{"no method", "gemini-2.5-flash", "", "", 404},
		{"wrong method", "g:embedContent", "", "", 404},
		{"no model", ":generateContent", "", "", 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			model, method, err := Path(c.rest)
			if c.status != 0 {
				if got := llm.HTTPStatus(err); got != c.status {
					t.Errorf("got %d (%v), want %d", got, err, c.status)
				}
				return
			}
			if err != nil || model != c.model || method != c.method {
				t.Errorf("got %q %q %v, want %q %q", model, method, err, c.model, c.method)
			}
		})
	}
}

// TestDecode: each member of a GenerateContentRequest lands where llm says it.
func TestDecode(t *testing.T) {
	body := `{
 "systemInstruction": {"parts": [{"text": "Be brief."}]},
 "contents": [
  {"role": "user", "parts": [{"text": "Look"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}},
   {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://b/cat.jpg"}}]},
  {"role": "model", "parts": [{"text": "thinking", "thought": true}, {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "sig"}]},
  {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"ok": true}}}, {"text": "go on"}]}
 ],
 "tools": [{"functionDeclarations": [{"name": "f", "description": "d", "parameters": {"type": "OBJECT", "properties": {"a": {"type": "INTEGER"}}}},
  {"name": "g", "parametersJsonSchema": {"type": "object"}}]}],
 "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}},
 "generationConfig": {"temperature": 0.5, "topP": 0.9, "topK": 40, "maxOutputTokens": 100, "stopSequences": ["END"],
  "candidateCount": 1, "responseMimeType": "application/json", "responseSchema": {"type": "OBJECT"},
  "thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": true}},
 "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}]
}`
	d, err := Decode([]byte(body), input("m:streamGenerateContent", "sse"))
	if err != nil {
		t.Fatal(err)
	}
	q := d.Req
	if d.Model != "m" || !q.Stream || d.Of(dialect.Call) != dialect.Call {
		t.Errorf("got model %q stream %v, want m, streamed", d.Model, q.Stream)
	}
	ms := q.Messages
	if len(ms) != 5 {
		t.Fatalf("got %d messages, want system, user, assistant, tool, user: %+v", len(ms), ms)
	}
	if ms[0].Role != llm.RoleSystem || ms[0].Parts[0].Text != "Be brief." {
		t.Errorf("system: got %+v", ms[0])
	}
	if u := ms[1]; len(u.Parts) != 3 || u.Parts[1].URL != "data:image/png;base64,iVBORw==" || u.Parts[2].URL != "gs://b/cat.jpg" {
		t.Errorf("user: got %+v", u)
	}
	a := ms[2]
	if len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != SyntheticID+"0" || a.ToolCalls[0].Arguments != `{"a": 1}` ||
		len(a.Reasoning) != 2 || a.Reasoning[0] != (llm.Reasoning{Text: "thinking", Wire: "gemini"}) ||
		a.Reasoning[1] != (llm.Reasoning{ID: SyntheticID + "0", Encrypted: "sig", Wire: "gemini"}) {
		t.Errorf("model: got %+v", a)
	}
	if tm := ms[3]; tm.Role != llm.RoleTool || tm.ToolCallID != SyntheticID+"0" || tm.Parts[0].Text != `{"ok": true}` {
		t.Errorf("tool: got %+v", tm)
	}
	if len(q.Tools) != 1 || q.Tools[0].Name != "f" || string(q.Tools[0].Parameters) != `{"properties":{"a":{"type":"integer"}},"type":"object"}` {
		t.Errorf("tools: got %+v", q.Tools)
	}
	if string(q.ToolChoice) != `{"function":{"name":"f"},"type":"function"}` {
		t.Errorf("tool choice: got %s", q.ToolChoice)
	}
	if *q.Temperature != 0.5 || *q.TopP != 0.9 || *q.MaxTokens != 100 || q.Stop[0] != "END" {
		t.Errorf("generation: got %+v", q)
	}
	if string(q.ResponseFormat) != `{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"}}}` {
		t.Errorf("response format: got %s", q.ResponseFormat)
	}
	extra := map[string]string{}
	for _, f := range q.Extra {
		extra[f.Name] = string(f.Value)
	}
	if extra["top_k"] != "40" || extra["reasoning_effort"] != `"medium"` {
		t.Errorf("extra: got %v", extra)
	}
}

func TestDecodeCount(t *testing.T) {
	d, err := Decode([]byte(`{"contents":[{"parts":[{"text":"hello there"}]}]}`), input("m:countTokens", ""))
	if err != nil || d.Of(dialect.Call) != dialect.Count || d.Estimate() < 1 {
		t.Fatalf("got %+v %v, want a count", d, err)
	}
}

// TestDecodeRefuses: what the wire cannot serve, or Google would refuse, is a 400 that says
// what.
func TestDecodeRefuses(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"not JSON", `{`, "Invalid JSON payload"},
		{"trailing", `{"contents":[{"parts":[{"text":"a"}]}]} {}`, "Invalid JSON payload"},
		{"unknown member", `{"contents":[{"parts":[{"text":"a"}]}],"nope":1}`, `Unknown name "nope"`},
		{"unknown part", `{"contents":[{"parts":[{"videoMetadata":{}}]}]}`, `Unknown name "videoMetadata"`},
		{"wrong type", `{"contents":[{"parts":"a"}]}`, "Invalid value"},
		{"no contents", `{}`, "contents is not specified"},
		{"empty parts", `{"contents":[{"parts":[]}]}`, "must not be empty"},
		{"bad role", `{"contents":[{"role":"system","parts":[{"text":"a"}]}]}`, "valid role"},
		{"candidates", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"candidateCount":2}}`, "one candidate"},
		{"no mime type", `{"contents":[{"parts":[{"inlineData":{"data":"AA=="}}]}]}`, "mimeType is required"},
		{"orphan result", `{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "answers no functionCall"},
		{"call in user turn", `{"contents":[{"parts":[{"functionCall":{"name":"f"}}]}]}`, "model turn"},
		{"mode", `{"contents":[{"parts":[{"text":"a"}]}],"toolConfig":{"functionCallingConfig":{"mode":"VALIDATED"}}}`, "not served"},
		{"mime", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}}`, "not served"},
		{"cached content not a name", `{"contents":[{"parts":[{"text":"a"}]}],"cachedContent":7}`, "cached_content"},
		{"temperature", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"temperature":3}}`, "temperature"},
		{"image out", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseModalities":["TEXT","IMAGE"]}}`, "TEXT only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.body), input("m:generateContent", ""))
			var le *llm.Error
			if !errors.As(err, &le) || llm.HTTPStatus(err) != http.StatusBadRequest || !strings.Contains(le.Message, c.want) {
				t.Fatalf("got %v, want a 400 saying %q", err, c.want)
			}
			status, body := Error(err)
			var e struct {
				Error struct {
					Code            int
					Status, Message string
				}
			}
			if json.Unmarshal(body, &e) != nil || status != 400 || e.Error.Code != 400 || e.Error.Status != "INVALID_ARGUMENT" {
				t.Errorf("error body %s, want Google's 400", body)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	for code, want := range map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
		404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"} {
		if got := Status(code); got != want {
			t.Errorf("Status(%d): got %s, want %s", code, got, want)
		}
	}
}
