package sim

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// session is an agent conversation after turns user turns, as Claude Code marks it: a
// breakpoint on the system prompt, on the (last) tool and on the last user turn; toolTTL is
// the tool breakpoint's TTL. Every text is a multiple of four bytes, so tokens add up.
func session(turns int, toolTTL string) *llm.Request {
	text := func(s string, n int) string { return strings.Repeat(s, n) }
	req := &llm.Request{Model: "echo",
		Tools:    []llm.Tool{{Name: "read", Description: text("Read a file. ", 20)[:240], Parameters: []byte(`{"type":"object"}`), Cache: &llm.Cache{TTL: toolTTL}}},
		Messages: []llm.Message{{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: text("You are a coder. ", 25)[:400], Cache: &llm.Cache{}}}}}}
	for i := range turns {
		if i > 0 {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: text("done ", 40)}}})
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: text("next step ", 40)}}})
	}
	last := &req.Messages[len(req.Messages)-1].Parts[0]
	last.Cache = &llm.Cache{}
	return req
}

// plain is a conversation of n user turns of size bytes each, with no breakpoint.
func plain(n, size int) *llm.Request {
	req := &llm.Request{Model: "echo"}
	for i := range n {
		if i > 0 {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "okay"}}})
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: strings.Repeat("abcd", size/4)}}})
	}
	return req
}

func TestPromptCache(t *testing.T) {
	// Token sizes of session(): tools 240+4+17 bytes -> 66 tokens (rounded up), the system
	// 400 bytes, user turns 400 bytes, assistant turns 200 bytes.
	const tools, system = 66, 66 + 100
	turn := func(n int) int { return system + 100*n + 50*(n-1) } // prefix after user turn n
	tests := []struct {
		name    string
		reqs    []*llm.Request
		want    use // of the last request
		between time.Duration
	}{
		{name: "first turn writes up to the last breakpoint", reqs: []*llm.Request{session(1, "")},
			want: use{write: turn(1), prompt: turn(1)}},
		{name: "second turn reads the first turn's prefix, writes the rest", reqs: []*llm.Request{session(1, ""), session(2, "")},
			want: use{cached: turn(1), write: turn(2) - turn(1), prompt: turn(2)}},
		{name: "the same prompt again is all read", reqs: []*llm.Request{session(3, ""), session(3, "")},
			want: use{cached: turn(3), prompt: turn(3)}},
		{name: "a 1h breakpoint's segment is a 1h write", reqs: []*llm.Request{session(1, "1h")},
			want: use{write: turn(1), write1h: tools, prompt: turn(1)}},
		{name: "another model is another cache", reqs: []*llm.Request{session(1, ""), withModel(session(2, ""), "text")},
			want: use{write: turn(2), prompt: turn(2)}},
		{name: "a changed system prompt reads only the tools", reqs: []*llm.Request{session(1, ""), withSystem(session(2, ""), "Be brief.")},
			want: use{cached: tools, write: 319 - tools, prompt: 319}}, // (261+12+400+200+400)/4, rounded up
		{name: "a 5m entry is gone after 5 minutes", reqs: []*llm.Request{session(1, ""), session(2, "")}, between: 5 * time.Minute,
			want: use{write: turn(2), prompt: turn(2)}},
		{name: "a 1h entry outlives 5 minutes", reqs: []*llm.Request{session(1, "1h"), session(2, "1h")}, between: 30 * time.Minute,
			want: use{cached: tools, write: turn(2) - tools, prompt: turn(2)}},
		{name: "implicit: a short prefix is not cached", reqs: []*llm.Request{plain(2, 2000), plain(3, 2000)}},
		{name: "implicit: the first long prompt writes nothing", reqs: []*llm.Request{plain(2, 4096)},
			want: use{}},
		{name: "implicit: the next turn reads the prompt but its last message", reqs: []*llm.Request{plain(2, 4096), plain(3, 4096)},
			want: use{cached: 1025, prompt: 3074}}, // user+assistant of the first; (3*4096+2*4)/4
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newPromptCache()
				var got use
				for i, r := range tt.reqs {
					if i > 0 {
						time.Sleep(tt.between)
					}
					u, commit := c.plan(r, time.Now())
					commit()
					got = u
				}
				if got.zero() {
					got.prompt = 0 // the stream is left as the mock reports it
				}
				if tt.want.zero() {
					tt.want.prompt = 0
				}
				if got != tt.want {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		})
	}
}

func withModel(r *llm.Request, m string) *llm.Request { r.Model = m; return r }

func withSystem(r *llm.Request, s string) *llm.Request {
	r.Messages[0].Parts[0].Text = s + "..."
	return r
}

// TestHitRefreshes: a read keeps a 5m entry alive for 5 more minutes.
func TestHitRefreshes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newPromptCache()
		for i := range 4 {
			u, commit := c.plan(session(1, ""), time.Now())
			commit()
			if i > 0 && u.cached == 0 {
				t.Fatalf("read %d after %v: a miss, want a hit (each hit refreshes)", i, 4*time.Minute*time.Duration(i))
			}
			time.Sleep(4 * time.Minute)
		}
	})
}

// TestBounded: the cache never holds more than its bound; expired entries go first.
func TestBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newPromptCache()
		c.max = 5
		for i := range 20 {
			u, commit := c.plan(withModel(session(1, ""), "m"+string(rune('a'+i))), time.Now())
			commit()
			if u.write == 0 || c.len() > c.max {
				t.Fatalf("request %d: %+v, %d entries; want a write, at most %d entries", i, u, c.len(), c.max)
			}
		}
		time.Sleep(6 * time.Minute)
		u, commit := c.plan(withModel(session(1, ""), "fresh"), time.Now())
		commit()
		if c.len() != 3 || u.write == 0 { // session(1) has 3 breakpoints
			t.Errorf("after expiry: %d entries, want the 3 new ones only", c.len())
		}
	})
}

// TestEstimate: the prefix ending at the last block is the whole prompt as internal/usage
// estimates it, so the reported cache tokens never exceed the prompt.
func TestEstimate(t *testing.T) {
	for _, r := range []*llm.Request{session(5, "1h"), plain(3, 999), {Model: "x", Messages: []llm.Message{
		{Role: llm.RoleAssistant, Refusal: "no", Reasoning: []llm.Reasoning{{Text: "hmm"}},
			ToolCalls: []llm.ToolCall{{ID: "c", Name: "read", Arguments: `{"p":1}`}}},
		{Role: llm.RoleTool, ToolCallID: "c", Parts: []llm.Part{{Type: llm.PartText, Text: "42"}}}}}} {
		bs := boundaries(r)
		if got, want := bs[len(bs)-1].tokens, usage.PromptTokens(r); got != want {
			t.Errorf("%d messages: last boundary %d tokens, usage estimates %d", len(r.Messages), got, want)
		}
	}
}

// TestReported: over every wire, the usage of the stream carries the cache's tokens, within
// the prompt tokens; a request the cache does nothing for is reported as the mock reports it;
// the adapter's other abilities stay.
func TestReported(t *testing.T) {
	for _, api := range APIs {
		t.Run(api, func(t *testing.T) {
			p, err := New("sim", api)
			if err != nil {
				t.Fatal(err)
			}
			short := &llm.Request{Model: "echo", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "ping pong"}}}}}
			if u := usageOf(t, p, short); u.CachedTokens != 0 || u.CacheWriteTokens != 0 || u.PromptTokens != 3 {
				t.Errorf("no breakpoint: %+v, want the mock's 3 prompt tokens and no cache", u)
			}
			first := usageOf(t, p, session(1, "1h"))
			second := usageOf(t, p, session(2, "1h"))
			if first.CacheWriteTokens == 0 || first.CacheWrite1hTokens != 66 || first.CachedTokens != 0 {
				t.Errorf("first turn: %+v, want a write, 66 of it 1h, no read", first)
			}
			if second.CachedTokens != first.CacheWriteTokens || second.CacheWriteTokens != 150 ||
				second.PromptTokens < second.CachedTokens+second.CacheWriteTokens || second.TotalTokens != second.PromptTokens+second.CompletionTokens {
				t.Errorf("second turn: %+v, want the first turn's %d read, 150 written, within the prompt", second, first.CacheWriteTokens)
			}
			if _, ok := embeddings.Target(p); ok != (api == "chat" || api == "responses") {
				t.Errorf("embeddings target: %v", ok)
			}
			_, isResponses := p.(interface{ ResponsesAPI() bool })
			if isResponses != (api == "responses") {
				t.Errorf("ResponsesAPI: %v", isResponses)
			}
		})
	}
}

func usageOf(t *testing.T, p llm.Provider, req *llm.Request) llm.Usage {
	t.Helper()
	var u llm.Usage
	if err := drain(t, p, req, func(ev llm.Event) {
		if ev.Type == llm.EvUsage {
			u = *ev.Usage
		}
	}); err != nil {
		t.Fatal(err)
	}
	return u
}
