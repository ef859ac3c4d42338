package mockllm

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// words feed the text generator: common English words, so generated answers look like prose
// to anything that tokenizes, wraps or redacts them.
var words = strings.Fields(`the a of and to in is it that for on with as was at by this be
from or have an are not but what all were when we there can your which their said each she do
how if will up other about out many then them these so some her would make like him into time
has look two more write go see number no way could people my than first water been call who
its now find long down day did get come made may part answer model token stream gateway
request window signal river light quiet simple table garden letter morning`)

// generate returns exactly n bytes of deterministic English-like text for seed: capitalized
// sentences of nine words, cut at n bytes.
func generate(n int, seed uint64) string {
	var b strings.Builder
	x := seed
	for i := 0; b.Len() < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407 // Knuth's MMIX LCG
		w := words[(x>>33)%uint64(len(words))]
		if i > 0 {
			b.WriteByte(' ')
		}
		if i%9 == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if i%9 == 8 {
			b.WriteByte('.')
		}
	}
	return b.String()[:n]
}

// compose builds the text of one choice: generated text with the literal say inserted at the
// byte offset at (-1: the middle, clamped to the text).
func compose(n int, seed uint64, say string, at int) string {
	g := generate(n, seed)
	if say == "" {
		return g
	}
	if at < 0 {
		at = n / 2
	}
	at = min(at, len(g))
	return g[:at] + say + g[at:]
}

// splitText cuts s into deltas of at most size bytes (never inside a rune, at least one rune)
// or of size words (a word carries its leading spaces, like a tokenizer's " word"). Size 0
// means one delta. Empty text gives no delta.
func splitText(s string, size int, byWords bool) []string {
	if s == "" {
		return nil
	}
	if size == 0 {
		return []string{s}
	}
	var out []string
	for s != "" {
		end := 0
		if byWords {
			for w := 0; w < size && end < len(s); w++ {
				end = nextWord(s, end)
			}
		} else {
			for end < len(s) {
				_, n := utf8.DecodeRuneInString(s[end:])
				if end > 0 && end+n > size {
					break
				}
				end += n
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// nextWord returns the end of the word starting at i: leading spaces, then non-spaces.
func nextWord(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for i < len(s) && s[i] != ' ' {
		i++
	}
	return i
}

// splitAt cuts s at the given byte offsets, moved forward to rune boundaries; offsets outside
// s are ignored.
func splitAt(s string, cuts []int) []string {
	var out []string
	prev := 0
	for _, c := range cuts {
		for c < len(s) && !utf8.RuneStart(s[c]) {
			c++
		}
		if c <= prev || c >= len(s) {
			continue
		}
		out = append(out, s[prev:c])
		prev = c
	}
	return append(out, s[prev:])
}

// text returns the text of a message content: a string, or the parts of an array whose type
// is one of kinds ("text" for Chat and Anthropic), joined by newlines.
func text(content json.RawMessage, kinds ...string) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if slices.Contains(kinds, p.Type) {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// tokens estimates the tokens of a text as a quarter of its bytes, rounded up.
func tokens(bytes int) int { return (bytes + 3) / 4 }
