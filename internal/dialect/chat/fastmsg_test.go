package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

var fastMessageSeeds = []string{
	`{"role":"user","content":"Hello, Sluice! Tell me something."}`,
	` { "role" : "system" , "content" : "Be brief." , "name" : "ops" } `,
	`{"role":"tool","tool_call_id":"call_1","content":"42"}`,
	`{"role":"user","content":[{"type":"text","text":"hi"}],"extra":{"a":[1,2,{"b":null}]}}`,
	`{"role":"user","content":"caf\u00e9"}`, `{"role":"user","content":"a\"b"}`, `{"Role":"user","content":"x"}`,
	`{"role":"user","CONTENT":"x"}`, `{"role":"user","content":null}`, `{"role":"assistant","content":null,"tool_calls":[]}`,
	`{"role":"assistant","refusal":"no"}`, `{"role":"user","content":"x","cache_control":{"type":"ephemeral"}}`,
	`{"role":"user","content":"x"} trailing`, `{"role":"user","content":"x",}`, `{"role":1,"content":"x"}`,
	`{"role":"user","role":"system","content":"x"}`, `{"role":"us` + "\xff" + `er","content":"x"}`, `[]`, `"text"`, `{}`,
	`{"role":"user","content":"tab` + "\t" + `"}`, `{"rôle":"user"}`, `{"role":"user","content":"x"}{}`,
}

// FuzzFastMessage: what fastMessage decodes, encoding/json decodes the same way; what it
// leaves, encoding/json gets.
func FuzzFastMessage(f *testing.F) {
	for _, s := range fastMessageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast wire.ChatMessage
		if !fastMessage(raw, &fast) {
			return
		}
		var want wire.ChatMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("fastMessage took %q, encoding/json refuses it: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, want) && !(bytes.Equal(fast.Content, want.Content) && sameBut(fast, want)) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", raw, fast, want)
		}
	})
}

// sameBut compares two messages but for their content, which both hold as bytes.
func sameBut(a, b wire.ChatMessage) bool {
	a.Content, b.Content = nil, nil
	return reflect.DeepEqual(a, b)
}

// TestFastMessageTakes: the common messages go the fast way, and the others to encoding/json.
func TestFastMessageTakes(t *testing.T) {
	for raw, want := range map[string]bool{
		fastMessageSeeds[0]: true, fastMessageSeeds[1]: true, fastMessageSeeds[2]: true, fastMessageSeeds[3]: true,
		`{"role":"user","content":"caf\u00e9"}`: true, `{"Role":"user","content":"x"}`: false, `{"role":"user","content":null}`: false,
		`{"role":"assistant","content":null,"tool_calls":[]}`: false, `{"role":"user","content":"x"} trailing`: false,
		`{"role":"us\u0065r"}`: false, `{"role":"user","content":"x",}`: false,
	} {
		var w wire.ChatMessage
		if got := fastMessage([]byte(raw), &w); got != want {
			t.Errorf("fastMessage(%s) = %v, want %v", raw, got, want)
		}
	}
	if s, ok := plainString([]byte(`"caf\u00e9"`)); ok {
		t.Errorf("plainString took an escape: %q", s)
	}
	if s, ok := plainString([]byte(`"plain text"`)); !ok || s != "plain text" {
		t.Errorf("plainString = %q, %v", s, ok)
	}
}

// BenchmarkDecodeMessage is one message of a request decoded (decodeMessage), and the same
// with encoding/json, as before fastMessage.
func BenchmarkDecodeMessage(b *testing.B) {
	raw := []byte(`{"role":"user","content":"Hello, Sluice! Tell me something."}`)
	b.Run("decodeMessage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeMessage(3, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var w wire.ChatMessage
			var s string
			if json.Unmarshal(raw, &w) != nil || json.Unmarshal(w.Content, &s) != nil {
				b.Fatal("bad message")
			}
		}
	})
}
