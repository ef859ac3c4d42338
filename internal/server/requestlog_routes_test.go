package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Records of the other routes: the Anthropic Messages wire, the Responses wire, Gemini's
// (its key in the query) and a tool call through /mcp each have their wire, the key's team
// and, for /mcp, the call, and never the key; a request whose answer was masked and judged
// has its redactions and guardrail verdict, and the same request again its cache hit.
// Content is captured by the aliases' choice, on every wire and on the hit.
func TestRequestLogRoutes(t *testing.T) {
	url := serveGate(t, sqliteLogs(t, "")+`
providers:
  sim: {kind: sim}
tools:
  docs: {mcp: {url: "${DOCS}"}}
guardrails:
  no-condor: {stage: output, kind: terms, terms: [condor]}
teams:
  - {name: search}
models:
  default: {targets: [sim/echo], capture: content}
  judged: {targets: [sim/echo], cache: {}, guardrails: [no-condor], capture: content}
`, map[string]string{"DOCS": mcpDocs(t)}, time.Minute, nil)
	_, key := createKey(t, url, logsAdmin, `{"name":"bot","team":"search","mcp":{"servers":["*"]}}`)

	messages := do(t, "POST", url+"/v1/messages", key, messagesBody("default", false, ""))
	responses := do(t, "POST", url+"/v1/responses", key, respBody("default", true, ""))
	// Gemini's clients may carry the key in the query: the record keeps the path alone.
	gemini := do(t, "POST", url+"/v1beta/models/default:generateContent?key="+key, "",
		`{"contents":[{"role":"user","parts":[{"text":"Hello there, gateway."}]}]}`)
	sid := mcpInit(t, url, key)
	call, m := mcpPost(t, url, key, sid, mcpCall("docs__search", `{"q":"go"}`))
	const planted = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	judged := do(t, "POST", url+"/v1/chat/completions", key, say("judged", "my key is "+planted, false, ""))
	again := do(t, "POST", url+"/v1/chat/completions", key, say("judged", "my key is "+planted, false, ""))
	if messages.status != 200 || responses.status != 200 || gemini.status != 200 || m["result"] == nil || judged.status != 200 || again.status != 200 {
		t.Fatalf("got %d, %d, %d, %v, %d, %d; want every call served", messages.status, responses.status, gemini.status, m,
			judged.status, again.status)
	}
	if got := again.header.Get("X-Sluice-Cache"); got != "hit" {
		t.Fatalf("the second judged call: got X-Sluice-Cache %q, want hit", got)
	}

	for _, tt := range []struct {
		name  string
		r     reply
		check func(logRecord) bool
	}{
		{"messages", messages, func(r logRecord) bool {
			return r.Wire == "messages" && r.Path == "/v1/messages" && r.Alias == "default" && echoed(r)
		}},
		{"responses", responses, func(r logRecord) bool {
			return r.Wire == "responses" && r.Stream && r.Target == "sim/echo" && echoed(r)
		}},
		{"gemini", gemini, func(r logRecord) bool {
			return r.Wire == "gemini" && r.Path == "/v1beta/models/default:generateContent" && echoed(r)
		}},
		{"mcp", call, func(r logRecord) bool {
			return r.Wire == "mcp" && r.Path == "/mcp" && len(r.Tools) == 1 && r.Tools[0].Name == "docs__search" &&
				r.Tools[0].Server == "docs" && r.Tools[0].Outcome == "ok"
		}},
		{"masked and judged", judged, func(r logRecord) bool {
			return r.Wire == "chat" && r.Redactions > 0 && r.Content != nil && strings.Contains(r.Content.Answer, "my key is [REDACTED:") && r.Cache == "miss" && len(r.Guardrails) == 1 &&
				r.Guardrails[0] == logGuardrail{Name: "no-condor", Stage: "output", Verdict: "pass"}
		}},
		{"cache hit", again, func(r logRecord) bool {
			return r.Cache == "hit" && r.Content != nil && strings.Contains(r.Content.Answer, "my key is [REDACTED:")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := waitRecord(t, url, tt.r.header.Get("X-Request-Id"))
			if rec.Team != "search" || rec.KeyName != "bot" || rec.Status != 200 || !tt.check(rec) {
				t.Errorf("got record %+v", rec)
			}
			if b := do(t, "GET", url+"/admin/logs/"+rec.ID, logsAdmin, "").body; runOf(string(b), key) != "" {
				t.Errorf("the record quotes the virtual key: %s", b)
			}
		})
	}

	// The team filters the log and the usage (docs/request-log.md, docs/keys.md): the five
	// model requests count in the account, the MCP messages do not.
	if got := waitLogs(t, url, "team=search&alias=judged", 2); got[0].Team != "search" {
		t.Errorf("GET /admin/logs?team=search gave %+v", got)
	}
	waitLogs(t, url, "team=other", 0)
	for _, tt := range []struct {
		query string
		want  int
	}{{"team=search&group_by=team", 5}, {"team=other&group_by=team", 0}} {
		r := do(t, "GET", url+"/admin/usage?"+tt.query, logsAdmin, "")
		var u struct {
			Data []struct {
				Group    string
				Requests int
			}
		}
		n := 0
		if err := json.Unmarshal(r.body, &u); err == nil {
			for _, d := range u.Data {
				n += d.Requests
			}
		}
		if r.status != 200 || n != tt.want {
			t.Errorf("GET /admin/usage?%s: got %d %s, want %d requests", tt.query, r.status, r.body, tt.want)
		}
	}
}

// echoed reports whether a record captured the harness's prompt and sim/echo's answer to it.
func echoed(r logRecord) bool {
	return r.Content != nil && strings.Contains(r.Content.Request, "Hello there, gateway.") && r.Content.Answer == "Hello there, gateway."
}
