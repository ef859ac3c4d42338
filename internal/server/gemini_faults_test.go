package server_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// geminiStream is an alt=sse answer's events, decoded; it fails the test on an event that is
// not "data: {json}".
func geminiStream(t *testing.T, body string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for _, ev := range strings.Split(body, "\r\n\r\n") {
		if ev = strings.TrimSpace(ev); ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		var m map[string]json.RawMessage
		if !ok || json.Unmarshal([]byte(data), &m) != nil {
			t.Fatalf("event %q is not data: JSON; body %q", ev, body)
		}
		out = append(out, m)
	}
	return out
}

// TestGeminiFaults is the fault matrix of the fallback chain on the Gemini wire: a failure
// before commit (an error event before content, a rate limit, a cut, a stall, an HTTP 503,
// a refused connection), on a Gemini, Anthropic or Chat target, falls back to the next
// target, Gemini or Chat, and the client sees one clean stream: data events only, text, one
// finishReason, no error element. Text then an error is the error element after commit, last.
func TestGeminiFaults(t *testing.T) {
	faults := []string{"goog/text?fail=error", "goog/text?fail=ratelimit", "goog/text?fail=cut", "goog/text?fail=stall",
		"goog/text?fail=503", "anth/text?fail=error", "mock/text?fail=error", "dead/x"}
	for _, a := range faults {
		for _, b := range []string{"goog/text?len=40", "mock/text?len=40"} {
			t.Run(a+"|"+b, func(t *testing.T) {
				g := newFallbackGatewayWith(t, a, b, "{first_event: 750ms, idle: 750ms}")
				resp := postTo(t, g.url, "/v1beta/models/pair:streamGenerateContent?alt=sse", geminiBody)
				out, _ := io.ReadAll(resp.Body)
				evs := geminiStream(t, string(out))
				finishes, text := 0, false
				for _, ev := range evs {
					if ev["error"] != nil {
						t.Fatalf("got an error element %s; body %s", ev["error"], out)
					}
					finishes += strings.Count(string(ev["candidates"]), `"finishReason"`)
					text = text || strings.Contains(string(ev["candidates"]), `"text":"`)
				}
				if resp.StatusCode != 200 || finishes != 1 || !text {
					t.Fatalf("got %d %s, want one clean stream", resp.StatusCode, out)
				}
				if got := resp.Trailer.Get("X-Sluice-Target") + resp.Header.Get("X-Sluice-Target"); got != b {
					t.Errorf("served by %q, want %s", got, b)
				}
			})
		}
	}
	g := newFallbackGateway(t, "goog/text?len=80&fail=error&after=3", "mock/text?len=40")
	resp := postTo(t, g.url, "/v1beta/models/pair:streamGenerateContent?alt=sse", geminiBody)
	out, _ := io.ReadAll(resp.Body)
	evs := geminiStream(t, string(out))
	last := evs[len(evs)-1]
	if len(evs) < 2 || !strings.Contains(string(last["error"]), `"status":"UNAVAILABLE"`) || strings.Contains(string(out), "finishReason") ||
		resp.Header.Get("X-Sluice-Target") != "goog/text?len=80&fail=error&after=3" {
		t.Errorf("text then error: got %s, want text, then the error element last, no finishReason", out)
	}
}
