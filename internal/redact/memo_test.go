package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMemo checks that a Memo masks what Redact masks, the first time and from memory, that
// its memory starts over past its bound, and that a nil Memo's rules mask nothing.
func TestMemo(t *testing.T) {
	const secret = "sk-proj-Zq8vT2mX9rL4nB7cK1dF6hJ3"
	r, err := Compile(Config{Secrets: []string{secret}, Terms: []string{"hush"}})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Memo(8)
	rng := rand.New(rand.NewPCG(51, 7))
	words := []string{"", "openai-python/1.54.0", "/v1/chat/completions", "the key " + secret + " failed", "hush", "say hush now",
		strings.Repeat("a", memoLen) + secret, "plain"}
	for i := range 2000 {
		text := words[rng.IntN(len(words))]
		if i%3 == 0 {
			text += fmt.Sprint(i % 20) // new texts: the memory fills and starts over
		}
		got, want := m.Redact(text), r.Redact(text)
		if got != want {
			t.Fatalf("Memo.Redact(%q) = %q, Redact gives %q", text, got, want)
		}
		if strings.Contains(got, secret) {
			t.Fatalf("Memo.Redact(%q) = %q: not masked", text, got)
		}
		if n := m.n.Load(); n > m.max {
			t.Fatalf("the memory holds %d texts, more than %d", n, m.max)
		}
	}
	var kept int
	m.m.Load().Range(func(k, _ any) bool {
		if len(k.(string)) > memoLen {
			t.Errorf("kept a text of %d bytes", len(k.(string)))
		}
		kept++
		return true
	})
	if kept == 0 || kept > 8 {
		t.Fatalf("the memory keeps %d texts, want 1 to 8", kept)
	}
	var none *Rules
	if got := none.Memo(4).Redact("the key " + secret); got != "the key "+secret {
		t.Fatalf("nil rules masked: %q", got)
	}
}

// BenchmarkMemo is a record's four texts masked by the gateway's own secrets, from memory.
func BenchmarkMemo(b *testing.B) {
	r, err := Compile(Config{Secrets: []string{"sk-proj-Zq8vT2mX9rL4nB7cK1dF6hJ3"}})
	if err != nil {
		b.Fatal(err)
	}
	texts := []string{"", "openai-python/1.54.0", "/v1/chat/completions", "alpha"}
	for _, f := range []struct {
		name string
		fn   func(string) string
	}{{"redact", r.Redact}, {"memo", r.Memo(4096).Redact}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, t := range texts {
					f.fn(t)
				}
			}
		})
	}
}
