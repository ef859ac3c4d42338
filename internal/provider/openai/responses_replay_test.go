package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func (u *upstream) responses(c Config) *Responses {
	c.BaseURL = u.URL + "/v1"
	if c.APIKey == "" {
		c.APIKey = testKey
	}
	c.HTTPClient = u.Client()
	return NewResponses(c)
}

// respRequest is a minimal request; include is its Include.
func respRequest(include ...string) *llm.Request {
	r := testRequest()
	r.Include = include
	return r
}

func openResponses(t *testing.T, r *Responses, req *llm.Request) llm.Stream {
	t.Helper()
	s, err := r.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: got error %v, want nil", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// wantCall checks a whole tool call; args are compared as JSON values.
func wantCall(t *testing.T, tc llm.ToolCall, id, name, args string) {
	t.Helper()
	if tc.ID != id || tc.Name != name {
		t.Errorf("tool call: got id %q name %q, want %q %q", tc.ID, tc.Name, id, name)
	}
	var got, want any
	if err := json.Unmarshal([]byte(tc.Arguments), &got); err != nil {
		t.Fatalf("tool call %s arguments %q: got parse error %v, want JSON", name, tc.Arguments, err)
	}
	json.Unmarshal([]byte(args), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool call %s arguments: got %s, want %s", name, tc.Arguments, args)
	}
}

// encrypted returns what the recording says of its reasoning item at output_item.done: id,
// encrypted content, summary text.
func encrypted(t *testing.T, name string) (id, enc, summary string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".sse"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev respEvent
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_item.done" && ev.Item.Type == "reasoning" {
			for _, p := range ev.Item.Summary {
				summary += p.Text
			}
			return ev.Item.ID, ev.Item.EncryptedContent, summary
		}
	}
	t.Fatalf("%s: no reasoning item", name)
	return
}

// encryptedEvents returns the reasoning events that carry encrypted content.
func encryptedEvents(evs []llm.Event) []llm.Event {
	var out []llm.Event
	for _, e := range evs {
		if e.Type == llm.EvReasoning && e.Encrypted != "" {
			out = append(out, e)
		}
	}
	return out
}

func TestResponsesReplay(t *testing.T) {
	const encName = "openai-responses-reasoning-encrypted-function-call"
	tests := []struct {
		name    string
		include []string // the request's include
		golden  string   // "" is name
		check   func(t *testing.T, evs []llm.Event, r *llm.Response, end error)
	}{
		{name: "openai-responses-text", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if evs[0].Type != llm.EvStart || r.ID != "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed" || r.Model != "gpt-4o-2024-08-06" {
				t.Errorf("start: got %v %q %q, want start with the response id and model", evs[0].Type, r.ID, r.Model)
			}
			if c := r.Choices[0]; c.Text != "The capital of France is Paris." || c.Finish != "stop" || len(c.ToolCalls) != 0 {
				t.Errorf("got %+v, want the text and finish stop", c)
			}
			if evs[len(evs)-2].Type != llm.EvUsage || evs[len(evs)-1].Type != llm.EvDone {
				t.Errorf("got %s, want usage then done last", transcript(evs, end))
			}
			wantUsage(t, r.Usage, 278, 9, 287)
		}},
		{name: "openai-responses-function-call", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 1 || c.Finish != "tool_calls" || c.Text != "" {
				t.Fatalf("got %+v, want one tool call, finish tool_calls, no text", c)
			}
			wantCall(t, c.ToolCalls[0], "call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", `{"country":"France"}`)
			// The arguments arrive in fragments, after a first fragment with id and name.
			if n := strings.Count(transcript(evs, end), "tool_call "); n != 6 {
				t.Errorf("got %d tool-call fragments, want 6 (announce + 5 deltas)", n)
			}
			wantUsage(t, r.Usage, 255, 16, 271)
		}},
		{name: "openai-responses-parallel-function-calls", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 2 || c.Finish != "tool_calls" {
				t.Fatalf("got %d tool calls, finish %q, want 2, tool_calls", len(c.ToolCalls), c.Finish)
			}
			// The call ids of output_item.added stand (this test data changes them at .done).
			wantCall(t, c.ToolCalls[0], "call_6KxSghkb4MVnunFH2TxPErLP", "currentLocation", `{}`)
			wantCall(t, c.ToolCalls[1], "call_Dg6WUmFHNeR5JxX1s53s1G4b", "weather", `{"location":"Rome"}`)
			for _, e := range evs {
				if e.Type == llm.EvToolCall && e.Tool.ID != "" && e.Tool.Index != map[string]int{"currentLocation": 0, "weather": 1}[e.Tool.Name] {
					t.Errorf("call %s announced with index %d", e.Tool.Name, e.Tool.Index)
				}
			}
		}},
		{name: "openai-responses-reasoning-function-call-usage", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 1 || c.Finish != "tool_calls" || c.Reasoning != "" {
				t.Fatalf("got %+v, want one tool call, tool_calls, no reasoning text", c)
			}
			wantCall(t, c.ToolCalls[0], "call_CWXgs68YprAjp6t0371hiPOI", "final_result", `{"result":6666}`)
			if got := r.Usage; got != (llm.Usage{PromptTokens: 53, CompletionTokens: 469, TotalTokens: 522, ReasoningTokens: 448}) {
				t.Errorf("usage: got %+v, want 53/469/522 with 448 reasoning", got)
			}
			if e := encryptedEvents(evs); len(e) != 0 {
				t.Errorf("got %d encrypted reasoning events, want none: the client did not ask", len(e))
			}
		}},
		{name: "openai-responses-reasoning-function-call-usage", include: []string{includeEncrypted}, golden: "openai-responses-reasoning-function-call-usage.encrypted",
			check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
				wantEOF(t, end)
				id, enc, _ := encrypted(t, "openai-responses-reasoning-function-call-usage")
				if e := encryptedEvents(evs); len(e) != 1 || e[0].Encrypted != enc || e[0].ID != id || e[0].Text != "" {
					t.Errorf("got %d encrypted events, want one with the content and id of output_item.done", len(e))
				}
			}},
		{name: "openai-responses-text-then-function-call", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if c.Text != "I’ll check the capital lookup tool for “PotatoLand.”" || len(c.ToolCalls) != 1 || c.Finish != "tool_calls" {
				t.Fatalf("got %+v, want the narration, one call, tool_calls", c)
			}
			wantCall(t, c.ToolCalls[0], "call_LabG58Uhrq9kZvR52BYKjToD", "get_capital", `{"country":"PotatoLand"}`)
			last := map[llm.EventType]int{}
			for i, e := range evs {
				last[e.Type] = i
			}
			if last[llm.EvText] > last[llm.EvToolCall] {
				t.Error("text after the tool call, want the upstream's order")
			}
			if got := r.Usage; got != (llm.Usage{PromptTokens: 63, CompletionTokens: 69, TotalTokens: 132, ReasoningTokens: 26}) {
				t.Errorf("usage: got %+v", got)
			}
		}},
		{name: encName, check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			_, _, summary := encrypted(t, encName)
			c := r.Choices[0]
			if c.Reasoning != summary || c.ReasoningField != "" {
				t.Errorf("reasoning: got %q field %q, want the summary %q and no field", c.Reasoning, c.ReasoningField, summary)
			}
			wantCall(t, c.ToolCalls[0], "call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator", `{"a":12,"b":7,"op":"add"}`)
			if e := encryptedEvents(evs); len(e) != 0 {
				t.Errorf("got %d encrypted reasoning events, want none: the client did not ask", len(e))
			}
			wantUsage(t, r.Usage, 134, 28, 162)
		}},
		{name: encName, include: []string{"message.output_text.logprobs", includeEncrypted}, golden: encName + ".encrypted",
			check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
				wantEOF(t, end)
				id, enc, summary := encrypted(t, encName)
				e := encryptedEvents(evs)
				if len(e) != 1 || e[0].Encrypted != enc || e[0].ID != id {
					t.Fatalf("got %d encrypted events, want one with the content and id of output_item.done", len(e))
				}
				if r.Choices[0].Reasoning != summary {
					t.Errorf("reasoning: got %q, want the summary", r.Choices[0].Reasoning)
				}
				// The encrypted content follows its summary and precedes the call.
				for i, ev := range evs {
					if ev.Encrypted != "" && (evs[i-1].Type != llm.EvReasoning || evs[i+1].Type != llm.EvToolCall) {
						t.Errorf("encrypted event at %d: got neighbours %v, %v", i, evs[i-1].Type, evs[i+1].Type)
					}
				}
			}},
		{name: "openai-responses-instream-error", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			// Nested shape, before any output: a retryable kind, so the chain falls back.
			le := wantKind(t, end, llm.RateLimited)
			if le.Code != "insufficient_quota" || le.Type != "insufficient_quota" || !strings.Contains(le.Message, "You exceeded your current quota") {
				t.Errorf("got code %q type %q message %q, want the nested error's", le.Code, le.Type, le.Message)
			}
			for _, e := range evs {
				if e.Healthy() {
					t.Errorf("got healthy event %v before the error, want none", e.Type)
				}
			}
		}},
		{name: "openai-responses-instream-error-flat", check: func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			le := wantKind(t, end, llm.Unavailable)
			if le.Code != "server_error" || le.Type != "" || !strings.Contains(le.Message, "The server had an error") {
				t.Errorf("got code %q type %q message %q, want the flat error's", le.Code, le.Type, le.Message)
			}
			if r.Choices[0].Text != "Partial ans" || r.Choices[0].Finish != "" {
				t.Errorf("got text %q finish %q, want Partial ans and no finish", r.Choices[0].Text, r.Choices[0].Finish)
			}
		}},
	}
	for _, tt := range tests {
		golden := tt.golden
		if golden == "" {
			golden = tt.name
		}
		t.Run(golden, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			u := newUpstream(t, providertest.SSE(string(raw)))
			evs, end := providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest(tt.include...)))
			for i, e := range evs {
				if e.Type == 0 || e.Choice != 0 {
					t.Errorf("event %d: got type %v choice %d, want a type and choice 0", i, e.Type, e.Choice)
				}
			}
			tt.check(t, evs, assemble(evs), end)

			got := transcript(evs, end)
			path := filepath.Join("testdata", golden+".events.golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("transcript differs from %s:\ngot\n%s\nwant\n%s", path, got, want)
			}
		})
	}
}
