package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
)

// msgBody is a Messages body with the given members after model and max_tokens.
func msgBody(members string) string {
	return `{"model":"m","max_tokens":2048,` + members + `}`
}

// cc is a cache_control member with ttl ("" none).
func cc(ttl string) string {
	if ttl == "" {
		return `"cache_control":{"type":"ephemeral"}`
	}
	return `"cache_control":{"type":"ephemeral","ttl":"` + ttl + `"}`
}

// TestDecodeCache: cache_control on every kind of block the gateway translates lands on the
// llm value that block becomes, with its TTL, and nowhere else.
func TestDecodeCache(t *testing.T) {
	user := func(block string) string {
		return msgBody(`"messages":[{"role":"user","content":[` + block + `]}]`)
	}
	assistant := func(block string) string {
		return msgBody(`"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[` + block + `]}]`)
	}
	tests := []struct {
		name string
		body func(cc string) string
		at   func(r *llm.Request) *llm.Cache
	}{
		{"system block", func(cc string) string {
			return msgBody(`"system":[{"type":"text","text":"a"},{"type":"text","text":"s",` + cc + `}],"messages":[{"role":"user","content":"q"}]`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[1].Cache }},
		{"system message inside messages", func(cc string) string {
			return msgBody(`"messages":[{"role":"user","content":"q"},{"role":"system","content":[{"type":"text","text":"env",` + cc + `}]}]`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[1].Parts[0].Cache }},
		{"tool", func(cc string) string {
			return msgBody(`"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"f","input_schema":{"type":"object"},` + cc + `}],"messages":[{"role":"user","content":"q"}]`)
		}, func(r *llm.Request) *llm.Cache { return r.Tools[1].Cache }},
		{"user text", func(cc string) string { return user(`{"type":"text","text":"x",` + cc + `}`) },
			func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[0].Cache }},
		{"image", func(cc string) string {
			return user(`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"},` + cc + `}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[0].Cache }},
		{"pdf document", func(cc string) string {
			return user(`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="},` + cc + `}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[0].Cache }},
		{"text document", func(cc string) string {
			return user(`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"},` + cc + `}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[0].Cache }},
		{"assistant text", func(cc string) string { return assistant(`{"type":"text","text":"a",` + cc + `}`) },
			func(r *llm.Request) *llm.Cache { return r.Messages[1].Parts[0].Cache }},
		{"tool_use", func(cc string) string {
			return assistant(`{"type":"tool_use","id":"toolu_1","name":"f","input":{},` + cc + `}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[1].ToolCalls[0].Cache }},
		{"tool_result", func(cc string) string {
			return user(`{"type":"tool_result","tool_use_id":"toolu_1","content":"out",` + cc + `}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Cache }},
		{"tool_result content block", func(cc string) string {
			return user(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a"},{"type":"text","text":"b",` + cc + `}]}`)
		}, func(r *llm.Request) *llm.Cache { return r.Messages[0].Parts[1].Cache }},
	}
	for _, tt := range tests {
		for _, ttl := range []string{"", "5m", "1h"} {
			t.Run(tt.name+" ttl "+ttl, func(t *testing.T) {
				r, err := Decode([]byte(tt.body(cc(ttl))), noHeader)
				if err != nil {
					t.Fatal(err)
				}
				c := tt.at(&r.Req)
				if c == nil || c.TTL != ttl {
					t.Fatalf("got %+v, want a breakpoint with ttl %q", c, ttl)
				}
				if n := len(r.Req.CacheMarks()); n != 1 {
					t.Errorf("got %d breakpoints, want 1", n)
				}
			})
		}
		t.Run(tt.name+" without cache_control", func(t *testing.T) {
			r, err := Decode([]byte(tt.body(`"title":"t"`)), noHeader) // a member that does nothing here
			if err != nil {
				t.Fatal(err)
			}
			if c := tt.at(&r.Req); c != nil || len(r.Req.CacheMarks()) != 0 {
				t.Errorf("got %+v, want no breakpoint", c)
			}
		})
		t.Run(tt.name+" bad ttl", func(t *testing.T) {
			_, err := Decode([]byte(tt.body(`"cache_control":{"type":"ephemeral","ttl":"10m"}`)), noHeader)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid || !strings.Contains(e.Message, "cache_control.ephemeral.ttl: Input should be '5m' or '1h'") {
				t.Fatalf("got %v, want a 400 on the ttl", err)
			}
			status, body := Error(err, false)
			if status != 400 || !strings.HasPrefix(string(body), `{"type":"error","error":{"type":"invalid_request_error","message":"`) {
				t.Errorf("got %d %s, want Anthropic's 400 invalid_request_error", status, body)
			}
		})
	}
}

// A cache_control that is not an ephemeral object is a 400 too, on any block, even one only
// an Anthropic target reads (a server tool, a thinking block), and names where it is.
func TestDecodeCacheRefused(t *testing.T) {
	tests := []struct{ name, body, param string }{
		{"not ephemeral", msgBody(`"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"persistent"}}]}]`), "messages.0.content.0"},
		{"not an object", msgBody(`"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":"1h"}]}]`), "messages.0.content.0"},
		{"ttl on a server tool", msgBody(`"tools":[{"type":"web_search_20250305","name":"w","cache_control":{"type":"ephemeral","ttl":"2h"}}],"messages":[{"role":"user","content":"q"}]`), "tools.0"},
		{"ttl on a system block", msgBody(`"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1d"}}],"messages":[{"role":"user","content":"q"}]`), "system.0"},
		{"ttl on an unknown block", msgBody(`"messages":[{"role":"user","content":[{"type":"search_result","cache_control":{"type":"ephemeral","ttl":"0"}}]}]`), "messages.0.content.0"},
		{"ttl inside a tool_result", msgBody(`"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"60m"}}]}]}]`), "messages.0.content.0.content.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body), noHeader)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid || e.Param != tt.param || !strings.HasPrefix(e.Message, tt.param+".cache_control") {
				t.Errorf("got %v, want an Invalid error on %s.cache_control", err, tt.param)
			}
		})
	}
}

// Thinking blocks keep their signature, redacted ones their data, both byte for byte and
// marked as Anthropic's; an empty thinking (display "omitted") is not taken for redacted.
func TestDecodeThinking(t *testing.T) {
	body := msgBody(`"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"a+b","signature":"EqQBCkYIARgCIkB/+=="},` +
		`{"type":"thinking","thinking":"","signature":"c2lnMg=="},` +
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},{"type":"text","text":"ok"}]}],"metadata":{"user_id":"session-9"}`)
	r, err := Decode([]byte(body), noHeader)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Reasoning{
		{Text: "a+b", Encrypted: "EqQBCkYIARgCIkB/+==", Wire: "anthropic"},
		{Encrypted: "c2lnMg==", Wire: "anthropic"},
		{Encrypted: "EmwKAhgBEgy3va3pzix/LafPsn4a", Redacted: true, Wire: "anthropic"},
	}
	got := r.Req.Messages[1].Reasoning
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if r.Req.Session != "session-9" || r.Req.User != "session-9" {
		t.Errorf("got session %q user %q, want metadata.user_id in both", r.Req.Session, r.Req.User)
	}
}

// FuzzDecodeCache varies the cache_control and thinking members of every block kind: a
// decoded request has only ttls Anthropic takes, signatures and redacted data byte for byte
// as written, and a refused one is a 400.
func FuzzDecodeCache(f *testing.F) {
	f.Add(`{"type":"ephemeral","ttl":"1h"}`, "sig", "data", "think")
	f.Add(`{"type":"ephemeral"}`, "", "", "")
	f.Add(`null`, "a\u0000b", "\"", "\\")
	f.Add(`{"type":"ephemeral","ttl":5}`, "EqQB", "x", "")
	f.Add(`{"type":"ephemeral","ttl":"5m","extra":1}`, "s", "d", "t")
	f.Fuzz(func(t *testing.T, cache, sig, data, thinking string) {
		if !utf8.ValidString(sig + data + thinking) {
			return // JSON would carry U+FFFD, not these bytes
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		c := `,"cache_control":` + cache
		body := msgBody(`"system":[{"type":"text","text":"s"` + c + `}],` +
			`"tools":[{"name":"f","input_schema":{"type":"object"}` + c + `}],` +
			`"messages":[{"role":"user","content":[{"type":"text","text":"u"` + c + `}]},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":` + q(thinking) + `,"signature":` + q(sig) + `},` +
			`{"type":"redacted_thinking","data":` + q(data) + `},{"type":"tool_use","id":"t","name":"f","input":{}` + c + `}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"` + c + `}]` + c + `}]}]`)
		r, err := Decode([]byte(body), noHeader)
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid {
				t.Fatalf("got %v, want an Invalid error", err)
			}
			return
		}
		for _, m := range r.Req.CacheMarks() {
			if m.TTL != "" && m.TTL != "5m" && m.TTL != "1h" {
				t.Fatalf("got ttl %q", m.TTL)
			}
		}
		if n := len(r.Req.CacheMarks()); n != 0 && n != 6 {
			t.Fatalf("got %d breakpoints, want all 6 or none", n)
		}
		var rs []llm.Reasoning
		for _, m := range r.Req.Messages {
			rs = append(rs, m.Reasoning...)
		}
		if len(rs) != 2 || rs[0].Encrypted != sig || rs[0].Text != thinking || rs[1].Encrypted != data || !rs[1].Redacted {
			t.Fatalf("got %+v, want the signature and data as written", rs)
		}
	})
}
