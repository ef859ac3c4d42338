package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

func responsesBody(model string, stream bool, extra map[string]any) string {
	req := map[string]any{"model": model, "stream": stream, "instructions": "Be brief.",
		"input": []map[string]any{
			{"role": "user", "content": "first"},
			{"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
			{"role": "user", "content": []map[string]any{{"type": "input_text", "text": "say this"}}},
		}}
	for k, v := range extra {
		req[k] = v
	}
	return jsonBody(req)
}

func responsesStream(t *testing.T, c *http.Client, base, model string, extra map[string]any) ([]sseEvent, string) {
	t.Helper()
	resp := postJSON(t.Context(), t, c, base+"/responses", responsesBody(model, true, extra))
	body := readAll(t, resp)
	want(t, "status", resp.StatusCode, 200)
	want(t, "content type", resp.Header.Get("Content-Type"), "text/event-stream")
	return parseSSE(t, body)
}

// TestResponsesLikeFixtures compares the mock's streams with recordings of comparable
// answers: the same sequence of event and item types (deltas collapsed), and for every event
// the keys of a recording.
func TestResponsesLikeFixtures(t *testing.T) {
	reasoning := []string{"response.output_item.added/reasoning", "response.output_item.done/reasoning"}
	tests := []struct {
		model, fixture string
		skip           []string // shapes the fixture has and the script does not make
	}{
		{"text?len=40", "openai-responses-text.sse", nil},
		{"tools?split=3", "openai-responses-function-call.sse", nil},
		{"reason?think=60&len=0&calls=1", "openai-responses-reasoning-encrypted-function-call.sse", nil},
		{"tools?say=I'll+check.", "openai-responses-text-then-function-call.sse", reasoning},
		{"text?fail=error", "openai-responses-instream-error.sse", nil},
	}
	keys := map[string][]string{}
	for _, f := range []string{"openai-responses-text-then-function-call.sse", "openai-responses-instream-error.sse",
		"openai-responses-instream-error-flat.sse", "openai-responses-reasoning-encrypted-function-call.sse"} {
		for k, v := range keySets(t, fixtureEvents(t, f)) {
			keys[k] = append(keys[k], v...)
		}
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := modes[1].start(t, s)
			got, tail := responsesStream(t, c, base, tt.model, nil)
			want(t, "tail", tail, "")
			want(t, "shape", shapes(t, got), shapes(t, fixtureEvents(t, tt.fixture), tt.skip...))
			checkKeys(t, keySets(t, got), keys)
			decodeResponses(t, got)
		})
	}
}

func TestResponsesStream(t *testing.T) {
	weather := `get_weather({"location":"Paris, France","unit":"celsius"})`
	tests := []struct {
		name, model string
		extra       map[string]any
		check       func(t *testing.T, r respResult, events []sseEvent)
	}{
		{name: "text", model: "text?len=20&chunk=4", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "text", r.text, generate(20, 1))
			want(t, "terminal", r.terminalType, "response.completed")
			want(t, "usage", *r.terminal.Usage, openai.ResponseUsage{InputTokens: tokens(len("Be brief.firstsunnysay this")),
				OutputTokens: 5, TotalTokens: 5 + tokens(len("Be brief.firstsunnysay this"))})
			want(t, "ids", []string{r.terminal.ID, r.items[0].ID}, []string{"resp_mock_1", "msg_mock_1"})
			want(t, "instructions", *r.terminal.Instructions, "Be brief.")
		}},
		{name: "echo", model: "echo", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "text", r.text, "say this")
		}},
		{name: "echo of a string input", model: "echo", extra: map[string]any{"input": "just this"},
			check: func(t *testing.T, r respResult, events []sseEvent) {
				want(t, "text", r.text, "just this")
			}},
		{name: "reasoning and usage", model: "reason?think=40&len=8", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "summary", r.summary, generate(40, 1001))
			want(t, "text", r.text, generate(8, 1))
			want(t, "reasoning tokens", r.terminal.Usage.OutputTokensDetails.ReasoningTokens, 10)
			want(t, "no encrypted content", r.items[0].EncryptedContent, "")
		}},
		{name: "encrypted reasoning on request", model: "reason?think=8", extra: map[string]any{"store": false,
			"include": []string{"reasoning.encrypted_content"}}, check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "encrypted content", r.items[0].EncryptedContent != "", true)
			want(t, "store", r.terminal.Store, false)
		}},
		{name: "parallel calls", model: "tools?calls=2&split=1,5,9", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "calls", r.calls, []string{weather, `get_weather({"location":"Tokyo, Japan","unit":"celsius"})`})
			want(t, "call ids", []string{r.items[0].CallID, r.items[1].CallID}, []string{"call_mock_1_0", "call_mock_1_1"})
		}},
		{name: "refusal", model: "refuse", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "refusal", r.refusal, "I'm sorry, but I can't help with that.")
			want(t, "text", r.text, "")
			want(t, "part", r.items[0].Content[0].Type, "refusal")
		}},
		{name: "empty", model: "empty", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "names", names(events), []string{"response.created", "response.in_progress", "response.completed"})
		}},
		{name: "max", model: "tools?max=3", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "terminal", r.terminalType, "response.incomplete")
			want(t, "reason", r.terminal.IncompleteDetails.Reason, "max_output_tokens")
			want(t, "calls", r.calls, []string{`get_weather({"location":)`}) // 12 bytes
			want(t, "item status", r.items[0].Status, "incomplete")
		}},
		{name: "nodone", model: "text?len=5&end=nodone", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "last", r.terminalType, "response.in_progress")
			want(t, "items", len(r.items), 1)
		}},
		{name: "nofinish", model: "text?len=10&chunk=5&end=nofinish", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "last", events[len(events)-1].name, "response.output_text.delta")
			want(t, "text", r.text, generate(10, 1))
		}},
		{name: "error nested", model: "text?fail=error", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "names", names(events), []string{"response.created", "response.in_progress", "error", "response.failed"})
			want(t, "error", [2]any{r.errCode, r.errFlat}, [2]any{"server_error", false})
			want(t, "failed", *r.terminal.Error, openai.ResponseError{Code: "server_error", Message: "The server had an error while processing your request. Sorry about that!"})
		}},
		{name: "error flat after text", model: "text?len=20&chunk=10&fail=error&after=3&errshape=flat&code=boom",
			check: func(t *testing.T, r respResult, events []sseEvent) {
				want(t, "text", r.text, generate(20, 1)[:10])
				want(t, "error", [2]any{r.errCode, r.errFlat}, [2]any{"boom", true})
				want(t, "terminal", r.terminalType, "response.failed")
			}},
		{name: "error alone", model: "text?fail=error&end=nodone", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "names", names(events), []string{"response.created", "response.in_progress", "error"})
		}},
		{name: "event is response.failed", model: "text?fail=event&after=1", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "names", names(events), []string{"response.created", "response.in_progress",
				"response.output_item.added", "response.failed"})
			want(t, "failed", r.terminal.Error.Code, "server_error")
		}},
		{name: "ratelimit", model: "text?fail=ratelimit", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "error", r.errCode, "rate_limit_exceeded")
			want(t, "failed", r.terminal.Error.Code, "rate_limit_exceeded")
		}},
		{name: "error in place of completed", model: "text?len=5&fail=error&after=99", check: func(t *testing.T, r respResult, events []sseEvent) {
			want(t, "text", r.text, generate(5, 1))
			want(t, "terminal", r.terminalType, "response.failed")
		}},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				events, tail := responsesStream(t, c, base, tt.model, tt.extra)
				want(t, "tail", tail, "")
				tt.check(t, decodeResponses(t, events), events)
				want(t, "calls", s.Calls(tt.model), 1)
			})
		}
	}
}

func TestResponsesNonStream(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			model := "reason?think=8&len=6&calls=1"
			resp := postJSON(t.Context(), t, c, base+"/responses", responsesBody(model, false, nil))
			body := readAll(t, resp)
			want(t, "status", resp.StatusCode, 200)
			var r respObject
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			want(t, "object", [3]string{r.Object, r.Status, r.Model}, [3]string{"response", "completed", model})
			var kinds []string
			for _, o := range r.Output {
				var it respItem
				json.Unmarshal(o, &it)
				kinds = append(kinds, it.Type+":"+it.Status)
			}
			want(t, "output", kinds, []string{"reasoning:", "message:completed", "function_call:completed"})
			want(t, "usage", r.Usage.OutputTokensDetails.ReasoningTokens, 2)

			resp = postJSON(t.Context(), t, c, base+"/responses", responsesBody("text?len=4&fail=error", false, nil))
			e := decodeError(t, resp)
			want(t, "non-stream error", [2]any{resp.StatusCode, e.Type}, [2]any{500, "server_error"})
		})
	}
}

func TestResponsesErrorsTimesReplay(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			model := "text?fail=429&retry=2&times=1"
			var got []string
			for range 2 {
				resp := postJSON(t.Context(), t, c, base+"/responses", responsesBody(model, true, nil))
				readAll(t, resp)
				got = append(got, fmt.Sprint(resp.StatusCode, resp.Header.Get("Retry-After")))
			}
			want(t, "statuses", got, []string{"4292", "200"})
			want(t, "calls", s.Calls(model), 2)

			for _, tc := range []struct {
				body   string
				status int
				code   string
			}{
				{responsesBody("text?fail=503", true, nil), 503, ""},
				{responsesBody("nope", true, nil), 404, "model_not_found"},
				{responsesBody("embed", true, nil), 404, "model_not_found"},
				{`{"input":"x"}`, 400, "missing_required_parameter"},
				{`{`, 400, ""},
			} {
				resp := postJSON(t.Context(), t, c, base+"/responses", tc.body)
				e := decodeError(t, resp)
				want(t, tc.body, [2]any{resp.StatusCode, e.Code}, [2]any{tc.status, tc.code})
			}

			file, _ := os.ReadFile("testdata/openai-responses-text.sse")
			resp := postJSON(t.Context(), t, c, base+"/responses", responsesBody("replay?file=openai-responses-text.sse", true, nil))
			want(t, "replay", string(readAll(t, resp)), string(file))

			resp = postJSON(t.Context(), t, c, base+"/responses",
				responsesBody("replay?file=openai-responses-reasoning-encrypted-function-call.sse&fail=error&after=5", true, nil))
			events, _ := parseSSE(t, readAll(t, resp))
			want(t, "replay fault", names(events)[5:], []string{"error", "response.failed"})
			want(t, "fault sequence numbers continue", strings.Contains(events[5].data, `"sequence_number":5`) &&
				strings.Contains(events[6].data, `"sequence_number":6`), true)
		})
	}
}
