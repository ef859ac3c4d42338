package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upstream assembles a recorded stream the simple way, as a reference for what the client
// must end up with after the gateway.
func upstream(t *testing.T, file string) *parsed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../provider/openai/testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	p := &parsed{text: map[int]string{}, reasoning: map[int]string{}, refusal: map[int]string{},
		calls: map[int][]toolCallDelta{}, finish: map[int]string{}, roles: map[int]int{}}
	merged := map[int]map[int]*toolCallDelta{}
	for _, line := range strings.Split(string(b), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		if c.Usage != nil {
			p.usage = &c
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				p.text[ch.Index] += *ch.Delta.Content
			}
			if ch.Delta.Refusal != nil {
				p.refusal[ch.Index] += *ch.Delta.Refusal
			}
			if ch.FinishReason != nil {
				p.finish[ch.Index] = *ch.FinishReason
			}
			for _, tc := range ch.Delta.ToolCalls {
				if merged[ch.Index] == nil {
					merged[ch.Index] = map[int]*toolCallDelta{}
				}
				m := merged[ch.Index][tc.Index]
				if m == nil {
					m = &toolCallDelta{Index: tc.Index, Type: "function"}
					merged[ch.Index][tc.Index] = m
				}
				if tc.ID != "" {
					m.ID = tc.ID
				}
				m.Function.Name += tc.Function.Name
				m.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	for ci, calls := range merged {
		for i := 0; i < len(calls); i++ {
			p.calls[ci] = append(p.calls[ci], *calls[i])
		}
	}
	return p
}

func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file    string
		choices int
		usage   [3]int // prompt, completion, total, as recorded
		check   func(t *testing.T, p *parsed)
	}{
		{"openai-chat-text.sse", 1, [3]int{14, 30, 44}, func(t *testing.T, p *parsed) {
			if !strings.HasPrefix(p.text[0], "I'm") {
				t.Errorf("got text %q, want the recorded answer", p.text[0])
			}
		}},
		{"openai-chat-tool-call.sse", 1, [3]int{76, 24, 100}, nil},
		{"openai-chat-tool-call-2.sse", 1, [3]int{53, 15, 68}, func(t *testing.T, p *parsed) {
			if len(p.calls[0]) != 1 || p.calls[0][0].Function.Name != "get_capital" {
				t.Errorf("got calls %+v, want get_capital", p.calls[0])
			}
		}},
		{"openai-chat-parallel-tool-calls.sse", 1, [3]int{149, 60, 209}, func(t *testing.T, p *parsed) {
			if len(p.calls[0]) != 2 {
				t.Errorf("got %d calls, want 2", len(p.calls[0]))
			}
		}},
		{"openai-chat-n3-choices.sse", 3, [3]int{79, 42, 121}, nil},
		{"openai-chat-length.sse", 1, [3]int{79, 1, 80}, func(t *testing.T, p *parsed) {
			if p.finish[0] != "length" {
				t.Errorf("got finish %q, want length", p.finish[0])
			}
		}},
		{"openai-chat-refusal.sse", 1, [3]int{79, 11, 90}, func(t *testing.T, p *parsed) {
			if p.refusal[0] == "" || p.text[0] != "" {
				t.Errorf("got refusal %q text %q, want a refusal only", p.refusal[0], p.text[0])
			}
		}},
		{"openai-chat-logprobs.sse", 1, [3]int{9, 2, 11}, nil},
	}
	g := newGateway(t, "")
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			want := upstream(t, tt.file)
			resp := g.post(t, chatBody("mock/replay?file="+tt.file, true, `,"stream_options":{"include_usage":true}`))
			fs := frames(t, resp.Body)
			golden(t, strings.TrimSuffix(tt.file, ".sse")+".want.sse", []byte("data: "+strings.Join(fs, "\n\ndata: ")+"\n\n"))
			p := parse(t, fs)
			if !p.done || p.err != nil {
				t.Fatalf("got done %v err %v, want a whole stream", p.done, p.err)
			}
			for i := 0; i < tt.choices; i++ {
				if p.text[i] != want.text[i] || p.refusal[i] != want.refusal[i] || p.finish[i] != want.finish[i] {
					t.Errorf("choice %d: got text %q refusal %q finish %q, want %q %q %q", i, p.text[i], p.refusal[i], p.finish[i], want.text[i], want.refusal[i], want.finish[i])
				}
				if p.roles[i] != 1 {
					t.Errorf("choice %d: got %d role chunks, want 1", i, p.roles[i])
				}
				gc, _ := json.Marshal(p.calls[i])
				wc, _ := json.Marshal(want.calls[i])
				if string(gc) != string(wc) {
					t.Errorf("choice %d: got calls %s, want %s", i, gc, wc)
				}
				for _, c := range p.calls[i] {
					if !json.Valid([]byte(c.Function.Arguments)) {
						t.Errorf("arguments %q are not whole JSON", c.Function.Arguments)
					}
				}
			}
			if len(p.finish) != tt.choices {
				t.Errorf("got %d finished choices, want %d", len(p.finish), tt.choices)
			}
			u := p.usage.Usage
			if got := [3]int{u.PromptTokens, u.CompletionTokens, u.TotalTokens}; got != tt.usage {
				t.Errorf("got usage %v, want %v", got, tt.usage)
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}
