package chat

import (
	"errors"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// ttls lists r's breakpoints in prompt order (llm.Request.CacheMarks) by their TTL, "-" for
// the provider's default.
func ttls(r *llm.Request) []string {
	var out []string
	for _, c := range r.CacheMarks() {
		if c.TTL == "" {
			out = append(out, "-")
		} else {
			out = append(out, c.TTL)
		}
	}
	return out
}

func TestDecodeChatCacheControl(t *testing.T) {
	const eph, long = `{"type":"ephemeral"}`, `{"type":"ephemeral","ttl":"1h"}`
	tests := []struct {
		name  string
		body  string
		want  []string
		check func(t *testing.T, r *llm.Request)
	}{
		{name: "none", body: `{"model":"x","messages":[{"role":"user","content":"hi"}]}`},
		{name: "on a text part", body: `{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":` + long + `}]}]}`,
			want: []string{"1h"}, check: func(t *testing.T, r *llm.Request) {
				if p := r.Messages[0].Parts; p[0].Cache != nil || p[1].Cache == nil {
					t.Errorf("got %+v, want the mark on the second part", p)
				}
			}},
		{name: "on an image part", body: `{"model":"x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://a/b.png"},"cache_control":` + eph + `}]}]}`,
			want: []string{"-"}},
		{name: "on a string message", body: `{"model":"x","messages":[{"role":"system","content":"sys","cache_control":` + long + `},{"role":"user","content":"hi"}]}`,
			want: []string{"1h"}, check: func(t *testing.T, r *llm.Request) {
				if m := r.Messages[0]; !m.Plain || m.Parts[0].Cache == nil {
					t.Errorf("got %+v, want the mark on its one text part, still plain", m)
				}
			}},
		{name: "on an array message", body: `{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"cache_control":` + eph + `}]}`,
			want: []string{"-"}, check: func(t *testing.T, r *llm.Request) {
				if r.Messages[0].Parts[1].Cache == nil {
					t.Error("want the mark on the last part")
				}
			}},
		{name: "on a tool message", body: `{"model":"x","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"42","cache_control":` + long + `}]}`,
			want: []string{"1h"}, check: func(t *testing.T, r *llm.Request) {
				if r.Messages[2].Cache == nil || r.Messages[2].Parts[0].Cache != nil {
					t.Error("want the mark on the tool result's own block")
				}
			}},
		{name: "on an assistant's tool calls", body: `{"model":"x","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"cache_control":` + eph + `,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"d","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
			want: []string{"-"}, check: func(t *testing.T, r *llm.Request) {
				if r.Messages[1].ToolCalls[1].Cache == nil {
					t.Error("want the mark on the last tool call")
				}
			}},
		{name: "on a tool", body: `{"model":"x","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"},"cache_control":` + long + `}]}`,
			want: []string{"1h"}, check: func(t *testing.T, r *llm.Request) {
				if r.Tools[0].Cache != nil || r.Tools[1].Cache == nil {
					t.Error("want the mark on the second tool")
				}
			}},
		{name: "inside a tool's function", body: `{"model":"x","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a","cache_control":` + eph + `}}]}`,
			want: []string{"-"}},
		{name: "every block in order", body: `{"model":"x","tools":[{"type":"function","function":{"name":"a"},"cache_control":` + eph + `}],"messages":[` +
			`{"role":"system","content":[{"type":"text","text":"s","cache_control":` + long + `}]},{"role":"user","content":"u","cache_control":{"type":"ephemeral","ttl":"5m"}}]}`,
			want: []string{"-", "1h", "5m"}},
		{name: "unknown ttl is the default", body: `{"model":"x","messages":[{"role":"user","content":"hi","cache_control":{"type":"ephemeral","ttl":"2h"}}]}`,
			want: []string{"-"}},
		{name: "another type is no mark", body: `{"model":"x","messages":[{"role":"user","content":"hi","cache_control":{"type":"persistent"}}]}`},
		{name: "null", body: `{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":null}],"cache_control":null}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr, err := Decode([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got := ttls(&cr.Req)
			if len(got) != len(tt.want) {
				t.Fatalf("got marks %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got marks %v, want %v", got, tt.want)
				}
			}
			for _, f := range cr.Req.Extra {
				if f.Name == "cache_control" {
					t.Errorf("cache_control kept in Extra: %s", f.Value)
				}
			}
			if tt.check != nil {
				tt.check(t, &cr.Req)
			}
		})
	}
}

func TestDecodeChatCacheControlErrors(t *testing.T) {
	tests := []struct{ name, body, param string }{
		{"on a message", `{"model":"x","messages":[{"role":"user","content":"hi","cache_control":"ephemeral"}]}`, "messages[0].cache_control"},
		{"on a part", `{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":[1]}]}]}`, "messages[0].content[0].cache_control"},
		{"on a tool", `{"model":"x","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"},"cache_control":1}]}`, "tools[0].cache_control"},
		{"prompt_cache_key", `{"model":"x","messages":[{"role":"user","content":"hi"}],"prompt_cache_key":7}`, "prompt_cache_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body))
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid || e.Param != tt.param {
				t.Fatalf("got %v, want an Invalid error on %s", err, tt.param)
			}
		})
	}
}

func TestDecodeChatSession(t *testing.T) {
	tests := []struct {
		name, fields   string
		key, user, ses string
	}{
		{name: "none"},
		{name: "user", fields: `,"user":"u1"`, user: "u1", ses: "u1"},
		{name: "prompt_cache_key", fields: `,"prompt_cache_key":"k1"`, key: "k1", ses: "k1"},
		{name: "prompt_cache_key before user", fields: `,"user":"u1","prompt_cache_key":"k1"`, key: "k1", user: "u1", ses: "k1"},
		{name: "null key", fields: `,"prompt_cache_key":null,"user":"u1"`, user: "u1", ses: "u1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr, err := Decode([]byte(`{"model":"x","messages":[{"role":"user","content":"hi"}]` + tt.fields + `}`))
			if err != nil {
				t.Fatal(err)
			}
			r := &cr.Req
			if r.PromptCacheKey != tt.key || r.User != tt.user || r.Session != tt.ses {
				t.Errorf("got key %q user %q session %q, want %q %q %q", r.PromptCacheKey, r.User, r.Session, tt.key, tt.user, tt.ses)
			}
			for _, f := range r.Extra {
				if f.Name == "prompt_cache_key" {
					t.Errorf("prompt_cache_key kept in Extra too: an adapter would send it twice")
				}
			}
		})
	}
}
