package oai

import (
	"strings"
	"testing"
)

// peek walks the body without decoding it; what it finds must be what encoding/json finds,
// for any body (peekSlow is the encoding/json reading).
func FuzzPeek(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":100,"n":2}`,
		`{"model":"a","model":"b"}`,
		`{"mod\u0065l":"esc","max_completion_tokens":7}`,
		`{"MODEL":"upper","model":"lower"}`,
		`{"model":"caf\u00e9 \"q\""}`,
		`{"model":"caf` + "\xff" + `"}`,
		`{"model":1,"max_tokens":"x","max_output_tokens":12,"n":1.5}`,
		`{"max_tokens":-1,"max_completion_tokens":0,"max_output_tokens":9}`,
		`{"model":"m"} trailing`,
		`{"model":"m"}  ` + "\n",
		`[{"model":"m"}]`,
		`null`,
		``,
		`{"model":"m","messages":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"model":"m",}`,
		`{"model":"m" "n":1}`,
		`{"input":"x","model":"emb","n":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Peek(b), peekSlow(b); got != want {
			t.Errorf("Peek(%q) = %+v, encoding/json finds %+v", b, got, want)
		}
	})
}

// The cases that matter to the gate, spelled out: the model a handler will serve is the
// one the gate checked, and the reservation sees max_tokens and n.
func TestPeek(t *testing.T) {
	for _, c := range []struct {
		body string
		want Peeked
	}{
		{`{"model":"gpt-4o","max_tokens":100,"n":2}`, Peeked{Model: "gpt-4o", MaxTokens: 100, N: 2}},
		{`{"model":"a","model":"b"}`, Peeked{Model: "b"}},
		{`{"mod\u0065l":"esc"}`, Peeked{Model: "esc"}},
		{`{"MODEL":"upper"}`, Peeked{}},
		{`{"model":"q\"m"}`, Peeked{Model: `q"m`}},
		{`{"max_completion_tokens":0,"max_tokens":5,"max_output_tokens":9}`, Peeked{MaxTokens: 5}},
		{`{"model":"m"} x`, Peeked{}},
		{`not json`, Peeked{}},
	} {
		if got := Peek([]byte(c.body)); got != c.want {
			t.Errorf("Peek(%s) = %+v, want %+v", c.body, got, c.want)
		}
	}
}
