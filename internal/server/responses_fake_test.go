package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/server"
)

// serveFakes serves a gateway whose aliases are chains of fake providers' targets
// ("provider/m"), with direct provider/model calls allowed.
func serveFakes(t *testing.T, provs map[string]*fakeProvider, aliases map[string][]string) string {
	t.Helper()
	o := server.Options{Chains: map[string]*fallback.Chain{}, Providers: map[string]fallback.Provider{}}
	for name, p := range provs {
		o.Providers[name] = p
	}
	for alias, targets := range aliases {
		ch := &fallback.Chain{Alias: alias, CommitOnReasoning: true}
		for _, tg := range targets {
			p, m, _ := strings.Cut(tg, "/")
			ch.Targets = append(ch.Targets, fallback.Target{Name: tg, Model: m, Provider: provs[p]})
		}
		o.Chains[alias] = ch
	}
	srv := httptest.NewServer(server.New(o))
	t.Cleanup(srv.Close)
	return srv.URL
}

var reasoningAnswer = []llm.Event{
	{Type: llm.EvStart, ID: "resp_up", Model: "o-mini"},
	{Type: llm.EvReasoning, Text: "Thinking about it."},
	{Type: llm.EvReasoning, Encrypted: "gAAAA-opaque"},
	{Type: llm.EvText, Text: "Done."},
	{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CachedTokens: 4, ReasoningTokens: 3}},
	{Type: llm.EvDone, Finish: "stop"},
}

// Encrypted reasoning reaches the client only when it asked for it; usage keeps its details.
func TestResponsesEncryptedReasoning(t *testing.T) {
	url := serveFakes(t, map[string]*fakeProvider{"up": {events: reasoningAnswer}}, map[string][]string{"r": {"up/m"}})
	const include = `,"store":false,"include":["reasoning.encrypted_content"]`
	resp := postTo(t, url, "/v1/responses", respBody("r", true, include))
	evs, raw := respStream(t, resp.Body)
	golden(t, "responses-reasoning-encrypted.want.sse", createdAtRE.ReplaceAll([]byte(raw), []byte(`"created_at":0`)))
	a := assemble(evs)
	if a.summary != "Thinking about it." || a.text != "Done." || a.last != "response.completed" {
		t.Fatalf("got summary %q text %q end %q, want the reasoning, the text, completed", a.summary, a.text, a.last)
	}
	rs := a.final["output"].([]any)[0].(map[string]any)
	if rs["type"] != "reasoning" || rs["encrypted_content"] != "gAAAA-opaque" {
		t.Errorf("got first item %v, want reasoning with its encrypted content", rs)
	}
	u := a.final["usage"].(map[string]any)
	if u["input_tokens_details"].(map[string]any)["cached_tokens"] != 4.0 || u["output_tokens_details"].(map[string]any)["reasoning_tokens"] != 3.0 {
		t.Errorf("got usage %v, want cached 4 and reasoning 3", u)
	}
	for _, body := range []string{respBody("r", true, ""), respBody("r", false, "")} {
		b, _ := io.ReadAll(postTo(t, url, "/v1/responses", body).Body)
		if strings.Contains(string(b), "encrypted_content") || !strings.Contains(string(b), `"summary":[{"type":"summary_text","text":"Thinking about it."}]`) {
			t.Errorf("got %s, want the summary and no encrypted content when not asked", b)
		}
	}
}

// A previous_response_id names a response stored by a Responses upstream: the chain keeps
// only targets that speak the Responses API, and a 400 says so when none is left.
func TestResponsesPreviousResponseID(t *testing.T) {
	answer := []llm.Event{{Type: llm.EvText, Text: "ok"}, {Type: llm.EvDone, Finish: "stop"}}
	plain := &fakeProvider{events: answer}
	resp := &fakeProvider{events: answer, responses: true}
	url := serveFakes(t, map[string]*fakeProvider{"plain": plain, "resp": resp},
		map[string][]string{"mixed": {"plain/m", "resp/m"}, "chat-only": {"plain/m"}})
	const prev = `,"previous_response_id":"resp_prev"`
	tests := []struct {
		name, body string
		status     int
		target     string
	}{
		{"filtered to the Responses target", respBody("mixed", false, prev), 200, "resp/m"},
		{"streamed", respBody("mixed", true, prev), 200, "resp/m"},
		{"without it the chain is whole", respBody("mixed", false, ""), 200, "plain/m"},
		{"no Responses target in the alias", respBody("chat-only", false, prev), 400, ""},
		{"direct target without the Responses API", respBody("plain/m", true, prev), 400, ""},
		{"direct Responses target", respBody("resp/m", false, prev), 200, "resp/m"},
		{"no input with it", `{"model":"mixed","previous_response_id":"resp_prev"}`, 200, "resp/m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := plain.Calls()
			r := postTo(t, url, "/v1/responses", tt.body)
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != tt.status || r.Header.Get("X-Sluice-Target") != tt.target {
				t.Fatalf("got %d from %q (%s), want %d from %q", r.StatusCode, r.Header.Get("X-Sluice-Target"), b, tt.status, tt.target)
			}
			if tt.status == 400 {
				var e struct {
					Error struct{ Message, Param string }
				}
				if json.Unmarshal(b, &e) != nil || e.Error.Param != "previous_response_id" || !strings.Contains(e.Error.Message, "Responses upstream") {
					t.Errorf("got %s, want a 400 on previous_response_id saying why", b)
				}
			}
			if tt.target == "resp/m" && plain.Calls() != before {
				t.Errorf("the chat-only target was called for a previous_response_id")
			}
		})
	}
	resp.mu.Lock()
	defer resp.mu.Unlock()
	if resp.last.PreviousResponseID != "resp_prev" {
		t.Errorf("got previous_response_id %q upstream, want resp_prev", resp.last.PreviousResponseID)
	}
}

// Heartbeats and trailers are the chat stream's: a chain that fails after a keepalive sent
// the headers ends with the in-band error and response.failed.
func TestResponsesHeartbeat(t *testing.T) {
	serveResp := func(s *server.Server, model string) *recorder {
		rec := &recorder{h: http.Header{}}
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/responses", strings.NewReader(respBody(model, true, ""))))
		return rec
	}
	t.Run("slow commit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := serveResp(simGateway(t, "  slow: [\"sim/text?first=25s&len=20\"]\n"), "slow")
			body := rec.body.String()
			if !strings.HasPrefix(body, ": keepalive\n\n: keepalive\n\nevent: response.created\n") {
				t.Errorf("got %q, want two keepalives, then the stream", body)
			}
			if rec.sent.Get("Trailer") != "X-Sluice-Target, X-Sluice-Attempts" || rec.h.Get("X-Sluice-Target") != "sim/text?first=25s&len=20" {
				t.Errorf("got headers %v then %v, want the target as a trailer", rec.sent, rec.h)
			}
			if evs, _ := respStream(t, strings.NewReader(body)); assemble(evs).last != "response.completed" {
				t.Errorf("got %q, want a completed response", body)
			}
		})
	})
	t.Run("chain fails after a keepalive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := serveResp(simGateway(t, "  doomed: [\"sim/text?wait=15s&fail=500\", \"sim/text?wait=1s&fail=503\"]\n"), "doomed")
			evs, body := respStream(t, strings.NewReader(rec.body.String()))
			if rec.status != 200 || !strings.HasPrefix(body, ": keepalive\n\n") || len(evs) != 2 {
				t.Fatalf("got %d %q, want a keepalive, then two events", rec.status, body)
			}
			a := assemble(evs)
			if a.err == nil || a.last != "response.failed" || !strings.Contains(a.err.str("message"), "all targets of 'doomed' failed") {
				t.Errorf("got %q, want the error event naming the attempts, then response.failed", body)
			}
			if rec.h.Get("X-Sluice-Attempts") != "2" {
				t.Errorf("got trailer X-Sluice-Attempts %q, want 2", rec.h.Get("X-Sluice-Attempts"))
			}
		})
	})
}
