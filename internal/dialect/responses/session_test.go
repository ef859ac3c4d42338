package responses

import (
	"errors"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestDecodeResponsesSession(t *testing.T) {
	tests := []struct {
		name, fields   string
		key, user, ses string
	}{
		{name: "none"},
		{name: "user", fields: `,"user":"u1"`, user: "u1", ses: "u1"},
		{name: "prompt_cache_key", fields: `,"prompt_cache_key":"k1"`, key: "k1", ses: "k1"},
		{name: "prompt_cache_key before user", fields: `,"user":"u1","prompt_cache_key":"k1"`, key: "k1", user: "u1", ses: "k1"},
		{name: "null key", fields: `,"prompt_cache_key":null,"user":"u1"`, user: "u1", ses: "u1"},
		{name: "no input", fields: `,"previous_response_id":"resp_1","prompt_cache_key":"k1"`, key: "k1", ses: "k1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"x","input":"hi"` + tt.fields + `}`
			if tt.name == "no input" {
				body = `{"model":"x"` + tt.fields + `}`
			}
			rr, err := Decode([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			r := &rr.Req
			if r.PromptCacheKey != tt.key || r.User != tt.user || r.Session != tt.ses {
				t.Errorf("got key %q user %q session %q, want %q %q %q", r.PromptCacheKey, r.User, r.Session, tt.key, tt.user, tt.ses)
			}
			for _, f := range r.Extra {
				if f.Name == "prompt_cache_key" {
					t.Error("prompt_cache_key kept in Extra too: an adapter would send it twice")
				}
			}
			if tt.key != "" && field(r.Native, "prompt_cache_key") == nil {
				t.Error("prompt_cache_key left out of the native body")
			}
		})
	}
	_, err := Decode([]byte(`{"model":"x","input":"hi","prompt_cache_key":1}`))
	if e := (*llm.Error)(nil); !errors.As(err, &e) || e.Param != "prompt_cache_key" {
		t.Errorf("got %v, want an error on prompt_cache_key", err)
	}
}

// A reasoning item OpenAI encrypted says so (Wire), and its content stays in the native body
// only; another item's content (a signature the gateway handed out on this wire) is kept,
// its wire unknown.
func TestDecodeReasoningWire(t *testing.T) {
	body := `{"model":"x","input":[{"role":"user","content":"hi"},` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"}],"encrypted_content":"gAAAAABopenai"},` +
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"b"}],"encrypted_content":"EqQBsignature"},` +
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"c"}]},` +
		`{"role":"assistant","content":"ok"}]}`
	rr, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	rs := rr.Req.Messages[1].Reasoning
	want := []llm.Reasoning{{ID: "rs_1", Text: "a", Wire: "responses"}, {Text: "b", Encrypted: "EqQBsignature"}, {Text: "c"}}
	if len(rs) != len(want) {
		t.Fatalf("got %+v, want %+v", rs, want)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("item %d: got %+v, want %+v", i, rs[i], want[i])
		}
	}
}
