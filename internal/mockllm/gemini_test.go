package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/schema/gemini"
)

// geminiCall posts body to model's method (":streamGenerateContent?alt=sse" or
// ":generateContent") with the key in x-goog-api-key, as Google's clients and the gateway's
// adapter do, the model escaped into the path.
func geminiCall(t *testing.T, c *http.Client, base, model, method, body string, key bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
		base+"beta/models/"+url.PathEscape(model)+":"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key {
		req.Header.Set("X-Goog-Api-Key", "AIza-mock")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// geminiEvents decodes an alt=sse body: each event "data: {json}" ending in CRLF CRLF.
func geminiEvents(t *testing.T, body string) []gemini.Response {
	t.Helper()
	if !strings.HasSuffix(body, "\r\n\r\n") {
		t.Fatalf("body %q does not end with an event's CRLF CRLF", body)
	}
	var out []gemini.Response
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %q is not a data line", ev)
		}
		var r gemini.Response
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, r)
	}
	return out
}

const geminiUser = `{"contents":[{"role":"user","parts":[{"text":"hello there"}]}]}`

func TestGeminiStream(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c, base, _ := m.start(t, newTestServer())
			res, body := geminiCall(t, c, base, "reason?think=8&chunk=4&len=8", "streamGenerateContent?alt=sse", geminiUser, true)
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("got %d %s, want 200 text/event-stream: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			evs := geminiEvents(t, body)
			var thought, text string
			for i, ev := range evs {
				p := ev.Candidates[0].Content.Parts[0]
				if p.Thought {
					thought += p.Text
				} else {
					text += p.Text
				}
				if f := ev.Candidates[0].FinishReason; (f != "") != (i == len(evs)-1) {
					t.Errorf("event %d: finishReason %q, want it on the last event only", i, f)
				}
			}
			last := evs[len(evs)-1]
			if len(thought) != 8 || len(text) != 8 || last.Candidates[0].FinishReason != "STOP" {
				t.Errorf("got thought %q, text %q, finish %q; want 8 bytes each, STOP", thought, text, last.Candidates[0].FinishReason)
			}
			u := last.UsageMetadata
			if u == nil || u.ThoughtsTokenCount != 2 || u.CandidatesTokenCount != 2 || u.TotalTokenCount != u.PromptTokenCount+4 {
				t.Errorf("got usage %+v, want 2 thought and 2 candidate tokens", u)
			}
		})
	}
}

// A tool round: the calls come whole in one chunk, the first signed; the next request's
// functionResponse is what then=echo quotes.
func TestGeminiToolRound(t *testing.T) {
	c, base, _ := modes[0].start(t, newTestServer())
	const model = `tools?name=run_shell_command&args={"command":"echo hi"}&then=echo`
	_, body := geminiCall(t, c, base, model, "streamGenerateContent?alt=sse", geminiUser, true)
	evs := geminiEvents(t, body)
	p := evs[len(evs)-1].Candidates[0].Content.Parts[0]
	if p.FunctionCall == nil || p.FunctionCall.Name != "run_shell_command" || string(p.FunctionCall.Args) != `{"command":"echo hi"}` || p.ThoughtSignature == "" {
		t.Fatalf("got the last part %+v, want the signed call", p)
	}
	next := `{"contents":[{"role":"user","parts":[{"text":"run it"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"echo hi"}},"thoughtSignature":"x"}]},
		{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"hi\n"}}}]}]}`
	res, body := geminiCall(t, c, base, model, "generateContent", next, true)
	var r gemini.Response
	if err := json.Unmarshal([]byte(body), &r); err != nil || res.StatusCode != 200 {
		t.Fatalf("got %d %q (%v)", res.StatusCode, body, err)
	}
	if got := r.Candidates[0].Content.Parts[0].Text; got != "The tool answered: hi\n" {
		t.Errorf("got %q, want the tool's output quoted", got)
	}
}

func TestGeminiFaults(t *testing.T) {
	c, base, _ := modes[0].start(t, newTestServer())
	for _, tc := range []struct {
		name, model, method string
		key                 bool
		status              int
		want                string // in the body
	}{
		{"no key", "echo", "generateContent", false, 403, `"status":"PERMISSION_DENIED"`},
		{"http fault", "echo?fail=429", "streamGenerateContent?alt=sse", true, 429, `"status":"RESOURCE_EXHAUSTED"`},
		{"unknown script", "nope", "generateContent", true, 404, `"status":"NOT_FOUND"`},
		{"in-stream", "text?len=20&fail=error&after=1", "streamGenerateContent?alt=sse", true, 200,
			"data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n"},
		{"in-stream, not streamed", "text?fail=error", "generateContent", true, 503, `"status":"UNAVAILABLE"`},
		{"no alt=sse", "echo", "streamGenerateContent", true, 400, `"status":"INVALID_ARGUMENT"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := geminiCall(t, c, base, tc.model, tc.method, geminiUser, tc.key)
			if res.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %q, want %d with %s", res.StatusCode, body, tc.status, tc.want)
			}
			if tc.status == 200 && !bytes.HasSuffix([]byte(body), []byte("}}\r\n\r\n")) {
				t.Errorf("got %q, want the error event last", body)
			}
		})
	}
}
