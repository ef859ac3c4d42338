package cache

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func req(mod func(r *llm.Request)) *llm.Request {
	r := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}}
	if mod != nil {
		mod(r)
	}
	return r
}

func TestKey(t *testing.T) {
	base := Key("a", ScopeKey, Caller{KeyID: "k1"}, req(nil))
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name   string
		alias  string
		scope  Scope
		caller Caller
		mod    func(r *llm.Request)
		same   bool
	}{
		{"stream, usage, user, metadata", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) {
			r.Stream, r.IncludeUsage, r.User, r.Metadata = true, true, "u", json.RawMessage(`{"x":"y"}`)
			r.Extra = []llm.Field{{Name: "stream_options", Value: json.RawMessage(`{}`)}, {Name: "safety_identifier", Value: json.RawMessage(`"s"`)}}
		}, true},
		{"session and prompt_cache_key", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) {
			r.Session, r.PromptCacheKey = "conv-1", "conv-1"
		}, true},
		{"raw JSON spacing", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) {
			r.ResponseFormat = json.RawMessage(`{ "type" : "json_object" }`)
		}, false},
		{"other alias", "b", ScopeKey, Caller{KeyID: "k1"}, nil, false},
		{"other key", "a", ScopeKey, Caller{KeyID: "k2"}, nil, false},
		{"temperature", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) { r.Temperature = f(0) }, false},
		{"unmodelled field", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) {
			r.Extra = []llm.Field{{Name: "presence_penalty", Value: json.RawMessage(`0.5`)}}
		}, false},
		{"message text", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) { r.Messages[0].Parts[0].Text = "ho" }, false},
		{"tools", "a", ScopeKey, Caller{KeyID: "k1"}, func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "t"}} }, false},
	} {
		if got := Key(tt.alias, tt.scope, tt.caller, req(tt.mod)) == base; got != tt.same {
			t.Errorf("%s: got same key %v, want %v", tt.name, got, tt.same)
		}
	}
	// Spacing of raw JSON does not matter.
	a := Key("a", ScopeKey, Caller{}, req(func(r *llm.Request) { r.ResponseFormat = json.RawMessage(`{ "type" : "json_object" }`) }))
	b := Key("a", ScopeKey, Caller{}, req(func(r *llm.Request) { r.ResponseFormat = json.RawMessage(`{"type":"json_object"}`) }))
	if a != b {
		t.Error("got different keys for the same response_format spaced differently")
	}
	// A client's own body (Messages, Responses): delivery does not count, the rest does.
	native := func(body string, fs ...llm.Field) string {
		return Key("a", ScopeKey, Caller{}, req(func(r *llm.Request) {
			r.Native = &llm.Native{Wire: "anthropic", Body: json.RawMessage(body), Fields: fs}
		}))
	}
	if native(`{"model":"a","max_tokens":5,"stream":true}`) != native(`{ "max_tokens" : 5 }`) ||
		native(`{}`, llm.Field{Name: "stream", Value: json.RawMessage(`true`)}) != native(`{}`) {
		t.Error("native body: got different keys for a stream and its plain twin")
	}
	if native(`{"max_tokens":5}`) == native(`{"max_tokens":6}`) {
		t.Error("native body: got the same key for different max_tokens")
	}
	// Scopes: team shares within a team, global with everyone.
	team := func(id, t string) string {
		return Key("a", ScopeTeam, Caller{KeyID: id, Metadata: map[string]string{TeamField: t}}, req(nil))
	}
	if team("k1", "red") != team("k2", "red") || team("k1", "red") == team("k3", "blue") {
		t.Error("scope team: want keys of one team to share and teams apart")
	}
	if Key("a", ScopeTeam, Caller{KeyID: "k1"}, req(nil)) == Key("a", ScopeTeam, Caller{KeyID: "k2"}, req(nil)) {
		t.Error("scope team: keys without a team must not share")
	}
	if Key("a", ScopeGlobal, Caller{KeyID: "k1"}, req(nil)) != Key("a", ScopeGlobal, Caller{KeyID: "k2"}, req(nil)) {
		t.Error("scope global: want every key to share")
	}
}

func TestCacheable(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	seed, yes := int64(1), true
	for _, tt := range []struct {
		name string
		p    Policy
		mod  func(r *llm.Request)
		want bool
	}{
		{"unset temperature", Policy{}, nil, true},
		{"temperature 0", Policy{}, func(r *llm.Request) { r.Temperature = f(0) }, true},
		{"temperature 0.7", Policy{}, func(r *llm.Request) { r.Temperature = f(0.7) }, false},
		{"temperature 0.7 and a seed", Policy{}, func(r *llm.Request) { r.Temperature, r.Seed = f(0.7), &seed }, true},
		{"nondeterministic allowed", Policy{Nondeterministic: true}, func(r *llm.Request) { r.Temperature = f(0.7) }, true},
		{"store: true", Policy{}, func(r *llm.Request) { r.Store = &yes }, false},
	} {
		if got := tt.p.Cacheable(req(tt.mod)); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// failing is a store that cannot be reached.
type failing struct{}

func (failing) Get(context.Context, string) ([]byte, error) {
	return nil, &llm.Error{Kind: llm.Unavailable}
}
func (failing) Set(context.Context, string, []byte, time.Duration) error {
	return &llm.Error{Kind: llm.Unavailable}
}
func (failing) Clear(context.Context, string) (int, error) {
	return 0, &llm.Error{Kind: llm.Unavailable}
}

func answer(finish, refusal string) *llm.Response {
	return &llm.Response{Target: "p/m", Choices: []llm.Choice{{Text: "hello", Refusal: refusal, Finish: finish}},
		Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}, Attempts: []llm.Attempt{{Target: "p/m"}}}
}

func recorded(t *testing.T, max int, pieces ...string) *Recorder {
	t.Helper()
	rec := NewRecorder(discard{}, max)
	for _, p := range pieces {
		if err := rec.Event(&llm.Event{Type: llm.EvText, Text: p}); err != nil {
			t.Fatal(err)
		}
	}
	_ = rec.Event(&llm.Event{Type: llm.EvDone, Finish: "stop"})
	return rec
}

// collect is a sink that keeps the events it gets.
type collect struct{ evs []llm.Event }

func (c *collect) Event(ev *llm.Event) error { c.evs = append(c.evs, *ev); return nil }

func TestPutAndGet(t *testing.T) {
	now := time.Unix(1000, 0)
	c := &Cache{Store: &Memory{Now: func() time.Time { return now }}, Now: func() time.Time { return now }}
	p := Policy{TTL: time.Minute, MaxEntryBytes: 1 << 20}
	ctx := context.Background()
	if c.Put(ctx, p, "a", "k", c.Entry(p, recorded(t, 0, "hel", "lo"), "m", answer("stop", ""))) == 0 {
		t.Fatal("a complete answer was not stored")
	}
	now = now.Add(30 * time.Second)
	e := c.Get(ctx, "a", "k")
	if e == nil || e.Model != "m" || e.Target != "p/m" || e.Response.Usage.TotalTokens != 5 || e.Response.Attempts != nil || c.Age(e) != 30 {
		t.Fatalf("got %+v, want the stored answer with its usage, no attempts, 30s old", e)
	}
	var got collect
	if err := e.Replay(&got); err != nil || len(got.evs) != 3 || got.evs[0].Text != "hel" || got.evs[1].Text != "lo" {
		t.Errorf("got replay %+v, want the pieces as relayed", got.evs)
	}
	now = now.Add(31 * time.Second)
	if c.Get(ctx, "a", "k") != nil {
		t.Error("got an entry past its TTL, want a miss")
	}
	for _, tt := range []struct {
		name string
		rec  *Recorder
		resp *llm.Response
		p    Policy
	}{
		{"refusal", recorded(t, 0, "x"), answer("stop", "no"), p},
		{"cut at max_tokens", recorded(t, 0, "x"), answer("length", ""), p},
		{"content filter", recorded(t, 0, "x"), answer("content_filter", ""), p},
		{"no finish", recorded(t, 0, "x"), answer("", ""), p},
		{"recorder over its bound", recorded(t, 10, strings.Repeat("x", 100)), answer("stop", ""), p},
		{"entry over max_entry_bytes", recorded(t, 0, strings.Repeat("x", 100)), answer("stop", ""), Policy{TTL: time.Minute, MaxEntryBytes: 100}},
	} {
		if c.Put(ctx, tt.p, "a", tt.name, c.Entry(tt.p, tt.rec, "m", tt.resp)) != 0 || c.Get(ctx, "a", tt.name) != nil {
			t.Errorf("%s: stored, want not", tt.name)
		}
	}
	// A store that fails is a miss and a store that did not happen, never an error.
	f := &Cache{Store: failing{}}
	if f.Put(ctx, p, "a", "k", f.Entry(p, recorded(t, 0, "x"), "m", answer("stop", ""))) != 0 || f.Get(ctx, "a", "k") != nil {
		t.Error("a failing store: want no entry and no store")
	}
}

func TestMemoryBound(t *testing.T) {
	m := &Memory{MaxBytes: 30}
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		_ = m.Set(ctx, k, []byte("0123456789"), time.Minute)
	}
	_, _ = m.Get(ctx, "a") // a is now the most recent
	_ = m.Set(ctx, "d", []byte("0123456789"), time.Minute)
	if v, _ := m.Get(ctx, "b"); v != nil {
		t.Error("got b, want it evicted (least recently used)")
	}
	for _, k := range []string{"a", "c", "d"} {
		if v, _ := m.Get(ctx, k); v == nil {
			t.Errorf("got no %s, want it kept", k)
		}
	}
	if n, b := m.Len(); n != 3 || b != 30 || m.Evictions() != 1 {
		t.Errorf("got %d entries, %d bytes, %d evictions; want 3, 30, 1", n, b, m.Evictions())
	}
	_ = m.Set(ctx, "huge", make([]byte, 31), time.Minute)
	if v, _ := m.Get(ctx, "huge"); v != nil {
		t.Error("got a value larger than the store, want it not kept")
	}
}

// Add keeps the first value of a key until it expires or is deleted (the gateway's stored
// responses, which share the bound and the clock of the cache's entries).
func TestMemoryAddDelete(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &Memory{MaxBytes: 20, Now: func() time.Time { return now }}
	ctx := context.Background()
	if ok, _ := m.Add(ctx, "r", []byte("first"), time.Minute); !ok {
		t.Fatal("Add: got false, want true")
	}
	if ok, _ := m.Add(ctx, "r", []byte("second"), time.Minute); ok {
		t.Error("Add of a live key: got true, want false")
	}
	if v, _ := m.Get(ctx, "r"); string(v) != "first" {
		t.Errorf("got %q, want the first value", v)
	}
	now = now.Add(time.Minute)
	if ok, _ := m.Add(ctx, "r", []byte("third"), time.Minute); !ok {
		t.Error("Add of an expired key: got false, want true")
	}
	if ok, _ := m.Delete(ctx, "r"); !ok {
		t.Error("Delete: got false, want true")
	}
	if ok, _ := m.Delete(ctx, "r"); ok {
		t.Error("Delete again: got true, want false")
	}
	if ok, _ := m.Add(ctx, "big", make([]byte, 21), time.Minute); ok {
		t.Error("Add of a value larger than the store: got true, want false")
	}
	for _, k := range []string{"a", "b", "c"} {
		_, _ = m.Add(ctx, k, []byte("0123456789"), time.Minute)
	}
	if n, b := m.Len(); n != 2 || b != 20 {
		t.Errorf("got %d entries, %d bytes; want 2, 20 (the bound holds)", n, b)
	}
}
