package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/server"
)

// codexRequest is the request Codex CLI 0.169.0 sends (internal/dialect/responses/testdata),
// for model alias model: codex-0.169.0.json has every kind of tool and item Codex sends;
// codex-0.169.0-exec.json is the second request of a real `codex exec` tool round
// (test/e2e TestCodexCLI), as the upstream received it.
func codexRequest(t *testing.T, model string, file ...string) string {
	t.Helper()
	name := "codex-0.169.0.json"
	if len(file) > 0 {
		name = file[0]
	}
	b, err := os.ReadFile("../dialect/responses/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(bytes.TrimSpace(b)), `"model":"gpt-5.1-codex"`, `"model":"`+model+`"`, 1)
}

// Codex's request reaches a Responses target byte for byte but for the model: namespace,
// hosted and custom tools, the custom and web search calls in its input, client_metadata,
// prompt_cache_key, include, store, and secrets are masked in place when the alias asks.
func TestCodexToResponsesTarget(t *testing.T) {
	u, mock := upstreamsGateway(t, `  codex: [resp/echo]
  private:
    targets: [resp/echo]
    redact_input: true
`)
	for _, file := range []string{"codex-0.169.0.json", "codex-0.169.0-exec.json"} {
		body := codexRequest(t, "codex", file)
		r := postTo(t, u, "/v1/responses", body)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.Contains(string(b), "event: response.completed") {
			t.Fatalf("%s: got %d %s", file, r.StatusCode, b)
		}
		if got, want := string(mock.LastRequest("echo")), strings.Replace(body, `"model":"codex"`, `"model":"echo"`, 1); got != want {
			t.Errorf("%s: upstream got\n%s\nwant\n%s", file, got, want)
		}
	}
	key := "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	secret := strings.Replace(codexRequest(t, "private"), "echo sluice-ok", "echo "+key, -1)
	r := postTo(t, u, "/v1/responses", secret)
	io.Copy(io.Discard, r.Body)
	up := string(mock.LastRequest("echo"))
	if r.StatusCode != 200 || strings.Contains(up, key) || !strings.Contains(up, "[REDACTED:openai_key]") ||
		!strings.Contains(up, `"encrypted_content":"gAAAAABpZ2VuY3J5cHRlZA=="`) || !json.Valid([]byte(up)) {
		t.Errorf("got %d, upstream %s; want the key masked, the rest whole", r.StatusCode, up)
	}
}

// To a Chat target the hosted tool cannot go: the chain moves on to a Responses target, or,
// with none and hosted_tools: refuse, answers 400 unsupported_by_targets naming it. Without
// it, the request is translated: the namespace flattened, the custom tool a function of
// "input", the web search call and client_metadata left out.
func TestCodexToChatTarget(t *testing.T) {
	u, mock := upstreamsGateway(t, `  codex-chat: {targets: [chat/echo], hosted_tools: refuse}
  codex-both: [chat/echo, resp/echo]
`)
	r := postTo(t, u, "/v1/responses", codexRequest(t, "codex-chat"))
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || !strings.Contains(string(b), `"code":"unsupported_by_targets"`) || !strings.Contains(string(b), "'web_search'") {
		t.Errorf("got %d %s, want 400 unsupported_by_targets naming web_search", r.StatusCode, b)
	}
	r = postTo(t, u, "/v1/responses", codexRequest(t, "codex-chat", "codex-0.169.0-exec.json"))
	b, _ = io.ReadAll(r.Body)
	if r.StatusCode != 400 || !strings.Contains(string(b), `"code":"unsupported_by_targets"`) || !strings.Contains(string(b), "'web_search'") {
		t.Errorf("got %d %s, want the real request refused for its web_search", r.StatusCode, b)
	}
	r = postTo(t, u, "/v1/responses", codexRequest(t, "codex-both"))
	io.Copy(io.Discard, r.Body)
	if r.StatusCode != 200 || r.Header.Get("X-Sluice-Target") != "resp/echo" {
		t.Errorf("got %d from %s, want resp/echo after the Chat target refused", r.StatusCode, r.Header.Get("X-Sluice-Target"))
	}

	body := strings.Replace(codexRequest(t, "codex-chat"), `{"type":"web_search","external_web_access":false},`, "", 1)
	r = postTo(t, u, "/v1/responses", body)
	b, _ = io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("got %d %s", r.StatusCode, b)
	}
	var up struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		PromptCacheKey   string          `json:"prompt_cache_key"`
		SafetyIdentifier string          `json:"safety_identifier"`
		ClientMetadata   json.RawMessage `json:"client_metadata"`
	}
	raw := mock.LastRequest("echo")
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatal(err)
	}
	var tools, calls []string
	for _, tl := range up.Tools {
		tools = append(tools, tl.Function.Name)
	}
	for _, m := range up.Messages {
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.Function.Name+" "+tc.Function.Arguments)
		}
		if m.Role == "tool" {
			calls = append(calls, "tool "+m.ToolCallID)
		}
	}
	wantCalls := []string{`exec_command {"cmd":"echo sluice-ok","yield_time_ms":1000}`, "tool call_exec_1",
		`apply_patch {"input":"*** Begin Patch\n*** Add File: notes.txt\n+sluice\n*** End Patch\n"}`, "tool call_patch_1",
		`mcp__docs__search {"query":"gateway"}`, "tool call_mcp_1"}
	if got := strings.Join(tools, ","); got != "exec_command,write_stdin,update_plan,view_image,mcp__docs__search,apply_patch" {
		t.Errorf("got tools %s", got)
	}
	if strings.Join(calls, "|") != strings.Join(wantCalls, "|") {
		t.Errorf("got calls %q, want %q", calls, wantCalls)
	}
	patch := up.Tools[5].Function
	if !strings.Contains(patch.Description, "lark grammar:") || !strings.Contains(string(patch.Parameters), `"input":{"type":"string"`) {
		t.Errorf("got apply_patch %+v, want a function of input with the grammar", patch)
	}
	if up.PromptCacheKey == "" || up.SafetyIdentifier != "sid-4d2c" || up.ClientMetadata != nil ||
		strings.Contains(string(raw), "web_search_call") || strings.Contains(string(raw), `"namespace"`) {
		t.Errorf("upstream got %s; want prompt_cache_key and safety_identifier, no client_metadata, web_search_call or namespace", raw)
	}
}

// Codex's default web_search to an alias with no Responses target: dropped, with a warning
// header, under hosted_tools: drop (the default), the rest of the request served; 400 under
// refuse. A chain with a Responses target keeps it, and says nothing.
func TestHostedToolsPolicy(t *testing.T) {
	u, mock := upstreamsGateway(t, `  codex-drop: [chat/echo, anth/echo]
  codex-refuse: {targets: [chat/echo], hosted_tools: refuse}
  codex-both: [chat/echo, resp/echo]
`)
	for _, tc := range []struct {
		alias, warning string
		status         int
	}{
		{"codex-drop", "dropped hosted tool web_search (no target of alias codex-drop serves it)", 200},
		{"codex-refuse", "", 400},
		{"codex-both", "", 200},
		{"chat/echo", "dropped hosted tool web_search (no target of alias chat/echo serves it)", 200},
	} {
		for _, stream := range []string{"true", "false"} {
			body := strings.Replace(codexRequest(t, tc.alias), `"stream":true`, `"stream":`+stream, 1)
			r := postTo(t, u, "/v1/responses", body)
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != tc.status || r.Header.Get("X-Sluice-Warning") != tc.warning {
				t.Errorf("%s stream %s: got %d, X-Sluice-Warning %q, %.300s; want %d, %q", tc.alias, stream, r.StatusCode,
					r.Header.Get("X-Sluice-Warning"), b, tc.status, tc.warning)
			}
			if tc.status == 400 && !strings.Contains(string(b), `"code":"unsupported_by_targets"`) {
				t.Errorf("%s: got %s, want unsupported_by_targets", tc.alias, b)
			}
			if tc.warning != "" && r.StatusCode == 200 {
				if up := string(mock.LastRequest("echo")); strings.Contains(up, "web_search") || !strings.Contains(up, "exec_command") {
					t.Errorf("%s: upstream got %s, want the other tools without web_search", tc.alias, up)
				}
			}
		}
	}
	// Only web_search: tool_choice goes with it, which a Chat upstream refuses without tools.
	only := `{"model":"codex-drop","input":"hi","tools":[{"type":"web_search"}],"tool_choice":"auto","stream":false}`
	r := postTo(t, u, "/v1/responses", only)
	b, _ := io.ReadAll(r.Body)
	if up := string(mock.LastRequest("echo")); r.StatusCode != 200 || strings.Contains(up, "tool_choice") || strings.Contains(up, `"tools"`) {
		t.Errorf("got %d %s, upstream %s; want 200 and no tools or tool_choice upstream", r.StatusCode, b, up)
	}
}

// A Chat or Anthropic target's calls come back to Codex in its terms: a flattened name in its
// namespace, a custom tool's call as a custom_tool_call with its input.
func TestCodexCallsFromChatTarget(t *testing.T) {
	u, _ := upstreamsGateway(t, "")
	body := strings.Replace(codexRequest(t, "x"), `{"type":"web_search","external_web_access":false},`, "", 1)
	for _, p := range []string{"chat", "anth"} {
		for _, tc := range []struct{ name, args, want string }{
			{"mcp__docs__search", `{"query":"q"}`, `"arguments":"{\"query\":\"q\"}","call_id":"`},
			{"apply_patch", `{"input":"*** Begin Patch\n*** End Patch\n"}`, `"type":"custom_tool_call","status":"completed","call_id":"`},
		} {
			model := p + "/tools?name=" + tc.name + "&args=" + url.QueryEscape(tc.args)
			r := postTo(t, u, "/v1/responses", strings.Replace(body, `"model":"x"`, `"model":`+quote(model), 1))
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("%s: got %s, want %s", model, b, tc.want)
			}
			if tc.name == "apply_patch" && !strings.Contains(string(b), `"input":"*** Begin Patch\n*** End Patch\n","name":"apply_patch"}`) {
				t.Errorf("%s: got %s, want the custom call's input unwrapped", model, b)
			}
			if tc.name == "mcp__docs__search" && !strings.Contains(string(b), `"name":"search","namespace":"mcp__docs"}`) {
				t.Errorf("%s: got %s, want the call back in its namespace", model, b)
			}
		}
	}
}

// Output items the gateway does not model reach Codex unchanged, in their place among the
// calls, streamed and not; a secret in one is masked, the JSON kept valid.
func TestCodexRawItemsToClient(t *testing.T) {
	ws := `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"}}`
	evs := []llm.Event{
		{Type: llm.EvText, Text: "Searching."},
		{Type: llm.EvItem, Tool: llm.ToolDelta{Index: 0}, Raw: json.RawMessage(ws)},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 1, ID: "call_1", Name: "apply_patch", Args: `{"input":"x"}`}},
		{Type: llm.EvDone, Finish: "tool_calls"},
	}
	up := &fakeProvider{events: evs}
	o := server.Options{Providers: map[string]fallback.Provider{"up": up},
		Chains: map[string]*fallback.Chain{"r": {Alias: "r", Targets: []fallback.Target{{Name: "up/m", Model: "m", Provider: up}}}},
		// Tool arguments' redaction (what redact.Rules.RedactJSON does, for one key).
		RedactJSON: func(s string) string {
			return strings.ReplaceAll(s, "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7", "[REDACTED:openai_key]")
		}}
	srv := httptest.NewServer(server.New(o))
	t.Cleanup(srv.Close)
	u := srv.URL
	masked := `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"[REDACTED:openai_key]"}}`
	for _, stream := range []bool{true, false} {
		body := strings.Replace(codexRequest(t, "r"), `"stream":true`, `"stream":`+map[bool]string{true: "true", false: "false"}[stream], 1)
		b, _ := io.ReadAll(postTo(t, u, "/v1/responses", body).Body)
		out := string(b)
		i, j := strings.Index(out, masked), strings.Index(out, `"type":"custom_tool_call"`)
		if i < 0 || j < i || strings.Contains(out, "Xq7Rt2") || strings.Index(out, "Searching.") > i {
			t.Errorf("stream=%v: got %s, want the text, the masked item, then the custom call", stream, out)
		}
	}
}

// To an Anthropic target the same translation holds: the namespace's function flattened,
// the custom tool a tool of one string "input", the custom call a tool_use with that input.
func TestCodexToAnthropicTarget(t *testing.T) {
	u, mock := upstreamsGateway(t, "  codex-anth: [anth/echo]\n")
	body := strings.Replace(codexRequest(t, "codex-anth"), `{"type":"web_search","external_web_access":false},`, "", 1)
	r := postTo(t, u, "/v1/responses", body)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("got %d %s", r.StatusCode, b)
	}
	var up struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type  string          `json:"type"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"messages"`
	}
	raw := mock.LastRequest("echo")
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatal(err)
	}
	var tools, uses []string
	for _, tl := range up.Tools {
		tools = append(tools, tl.Name)
	}
	for _, m := range up.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_use" {
				uses = append(uses, c.Name+" "+string(c.Input))
			}
		}
	}
	if got := strings.Join(tools, ","); got != "exec_command,write_stdin,update_plan,view_image,mcp__docs__search,apply_patch" {
		t.Errorf("got tools %s", got)
	}
	want := []string{`exec_command {"cmd":"echo sluice-ok","yield_time_ms":1000}`,
		`apply_patch {"input":"*** Begin Patch\n*** Add File: notes.txt\n+sluice\n*** End Patch\n"}`,
		`mcp__docs__search {"query":"gateway"}`}
	if strings.Join(uses, "|") != strings.Join(want, "|") {
		t.Errorf("got tool_use %q, want %q", uses, want)
	}
	if strings.Contains(string(raw), "client_metadata") || strings.Contains(string(raw), "web_search_call") {
		t.Errorf("upstream got %s, want no client_metadata or web_search_call", raw)
	}
}

// What lives in OpenAI's store goes to the chain's Responses targets, and is a 400 naming it
// when the chain has none.
func TestStoredAtOpenAIGoesToResponses(t *testing.T) {
	u, mock := upstreamsGateway(t, "  mixed: [chat/echo, resp/echo]\n")
	r := postTo(t, u, "/v1/responses", `{"model":"mixed","conversation":"conv_1","input":[{"type":"item_reference","id":"msg_1"}]}`)
	io.Copy(io.Discard, r.Body)
	if up := string(mock.LastRequest("echo")); r.StatusCode != 200 || r.Header.Get("X-Sluice-Target") != "resp/echo" ||
		up != `{"model":"echo","conversation":"conv_1","input":[{"type":"item_reference","id":"msg_1"}],"store":false,"stream":true}` {
		t.Errorf("got %d from %s, upstream %s; want resp/echo given the body", r.StatusCode, r.Header.Get("X-Sluice-Target"), up)
	}
	r = postTo(t, u, "/v1/responses", `{"model":"default","prompt":{"id":"pmpt_1"},"input":"hi"}`)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || !strings.Contains(string(b), `"param":"prompt"`) {
		t.Errorf("got %d %s, want 400 naming prompt", r.StatusCode, b)
	}
}
