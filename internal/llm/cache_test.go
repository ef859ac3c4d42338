package llm

import "testing"

func TestCachePlan(t *testing.T) {
	c := func() *Cache { return &Cache{} }
	r := &Request{
		Tools: []Tool{{Name: "a", Cache: c()}},
		Messages: []Message{
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "s", Cache: c()}}},
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "u", Cache: c()}}},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "a", Cache: c()}}},
			{Role: RoleTool, ToolCallID: "1", Parts: []Part{{Type: PartText, Text: "r"}}, Cache: &Cache{TTL: "1h"}},
			// A system message in the middle goes to the system prompt: it is cached
			// before the conversation.
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "late", Cache: &Cache{TTL: "5m"}}}},
		},
	}
	marks := r.CacheMarks()
	want := []*Cache{r.Tools[0].Cache, r.Messages[0].Parts[0].Cache, r.Messages[4].Parts[0].Cache,
		r.Messages[1].Parts[0].Cache, r.Messages[2].ToolCalls[0].Cache, r.Messages[3].Cache}
	if len(marks) != len(want) {
		t.Fatalf("got %d marks, want %d", len(marks), len(want))
	}
	for i := range want {
		if marks[i] != want[i] {
			t.Fatalf("mark %d is out of the order tools, system, the rest", i)
		}
	}
	ttl, dropped := r.CachePlan(MaxCacheMarks)
	if dropped != 2 {
		t.Fatalf("dropped %d, want 2", dropped)
	}
	for i, m := range marks {
		if _, ok := ttl(m); ok != (i >= 2) {
			t.Errorf("mark %d kept: %v, want the last four", i, ok)
		}
	}
	// The 1h on the tool result follows 5m and default ones: it goes as 5m.
	if got, ok := ttl(r.Messages[3].Cache); got != "5m" || !ok {
		t.Errorf("a 1h after shorter ones: got %q, want 5m", got)
	}
	if got, _ := ttl(r.Messages[4].Parts[0].Cache); got != "5m" {
		t.Errorf("a kept 5m: got %q", got)
	}
	if _, ok := ttl(nil); ok {
		t.Error("nil is no breakpoint")
	}
	if !r.Messages[3].Cache.Long() || r.Tools[0].Cache.Long() {
		t.Fatal("Long is the 1h TTL")
	}
	// Under the limit every breakpoint stays; a 1h first keeps its TTL.
	r.Tools[0].Cache.TTL = "1h"
	ttl, dropped = r.CachePlan(8)
	if got, ok := ttl(r.Tools[0].Cache); dropped != 0 || !ok || got != "1h" {
		t.Errorf("got %q %v with %d dropped, want the first 1h kept", got, ok, dropped)
	}
}

func TestAutoCache(t *testing.T) {
	r := &Request{
		Tools: []Tool{{Name: "a"}, {Name: "b"}},
		Messages: []Message{
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "s"}}},
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "u1"}}},
			{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "a"}}},
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "x"}, {Type: PartText, Text: "u2"}}},
		},
	}
	orig := r.Clone()
	if !r.AutoCache() {
		t.Fatal("AutoCache marked nothing")
	}
	if r.Tools[1].Cache == nil || r.Messages[0].Parts[0].Cache == nil || r.Messages[3].Parts[1].Cache == nil {
		t.Fatal("want marks on the last tool, the system prompt and the last user block")
	}
	if n := len(r.CacheMarks()); n != 3 {
		t.Fatalf("got %d marks, want 3", n)
	}
	if len(orig.CacheMarks()) != 0 {
		t.Fatal("AutoCache changed a clone's shared slices")
	}
	if r.AutoCache() {
		t.Fatal("a request with marks is left as it is")
	}
}

func TestCachePrefix(t *testing.T) {
	turn := func(msgs ...string) *Request {
		r := &Request{Messages: []Message{{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "sys"}}}}}
		for i, m := range msgs {
			role := RoleUser
			if i%2 == 1 {
				role = RoleAssistant
			}
			r.Messages = append(r.Messages, Message{Role: role, Parts: []Part{{Type: PartText, Text: m}}})
		}
		return r
	}
	a, b := turn("hi").CachePrefix(), turn("hi", "hello", "more").CachePrefix()
	if a != b || len(a) != 32 {
		t.Fatalf("two turns of one conversation: %s and %s", a, b)
	}
	if c := turn("other").CachePrefix(); c == a {
		t.Fatal("another conversation has the same prefix")
	}
	if turn("ab", "c").CachePrefix() == turn("a", "bc").CachePrefix() {
		t.Fatal("fields run into each other")
	}
}

// Reasoning goes back only to a wire that can read it: its own, Claude's between Anthropic
// and Bedrock, and any when its wire is not named.
func TestReadBy(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"anthropic", "anthropic", true}, {"anthropic", "bedrock", true}, {"bedrock", "anthropic", true},
		{"anthropic", "gemini", false}, {"anthropic", "responses", false}, {"responses", "anthropic", false},
		{"gemini", "bedrock", false}, {"gemini", "gemini", true}, {"responses", "responses", true},
		{"", "gemini", true}, {"", "anthropic", true},
	} {
		r := Reasoning{Encrypted: "x", Wire: c.from}
		if got := r.ReadBy(c.to); got != c.want {
			t.Errorf("%q read by %q: got %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
