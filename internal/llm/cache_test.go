package llm

import "testing"

func TestCacheKept(t *testing.T) {
	c := func() *Cache { return &Cache{} }
	r := &Request{
		Tools: []Tool{{Name: "a", Cache: c()}},
		Messages: []Message{
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "s", Cache: c()}}},
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "u", Cache: c()}}},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "a", Cache: c()}}},
			{Role: RoleTool, ToolCallID: "1", Parts: []Part{{Type: PartText, Text: "r"}}, Cache: &Cache{TTL: "1h"}},
		},
	}
	marks := r.CacheMarks()
	if len(marks) != 5 || marks[0] != r.Tools[0].Cache || marks[4] != r.Messages[3].Cache {
		t.Fatalf("got %d marks in the wrong order", len(marks))
	}
	keep, dropped := r.CacheKept(MaxCacheMarks)
	if dropped != 1 {
		t.Fatalf("dropped %d, want 1", dropped)
	}
	if keep(r.Tools[0].Cache) || !keep(r.Messages[3].Cache) || !keep(r.Messages[0].Parts[0].Cache) || keep(nil) {
		t.Fatal("the first breakpoint should go, the last four stay")
	}
	if !r.Messages[3].Cache.Long() || r.Tools[0].Cache.Long() {
		t.Fatal("Long is the 1h TTL")
	}
	if keep, dropped := r.CacheKept(8); dropped != 0 || !keep(r.Tools[0].Cache) {
		t.Fatal("under the limit every breakpoint stays")
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
